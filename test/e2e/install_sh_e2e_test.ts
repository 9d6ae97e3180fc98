/**
 * End to end: scripts/install.sh run by sh (dash on Debian) on a clean machine, against a release directory
 * on disk (file://) whose binaries are shell scripts named like the real artifacts, with a SHA256SUMS the
 * release's own writer made.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { writeChecksums } from "../../scripts/checksums.ts";
import { binaryName, TARGETS } from "../../scripts/compile.ts";
import { releaseFiles } from "../../scripts/release.ts";
import { CleanMachine, explain, type Run } from "./_clean_machine.ts";
import { LOCALHOST_CERT, LOCALHOST_KEY } from "../_fakes/localhost_tls.ts";
import { exists } from "../_fakes/exists.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const INSTALL_SH = join(ROOT, "scripts", "install.sh");
const VERSION = "0.1.0";
const PATH_LINE = 'export PATH="$HOME/.local/bin:$PATH"';

/** What the fake binary for a target prints for --version. */
function fakeVersion(target: string): string {
  return `mewcode ${VERSION} (fake ${target})`;
}

/** A release directory: a fake binary per target, stand-ins for the other files, and SHA256SUMS. */
async function makeRelease(machine: CleanMachine): Promise<string> {
  const dir = join(machine.root, "release");
  await Deno.mkdir(dir);
  for (const target of TARGETS) {
    await Deno.writeTextFile(join(dir, binaryName(target)), `#!/bin/sh\necho "${fakeVersion(target)}"\n`, {
      mode: 0o755,
    });
  }
  await Deno.writeTextFile(join(dir, `mewcode-${VERSION}.tgz`), "not a tarball");
  await Deno.copyFile(INSTALL_SH, join(dir, "install.sh"));
  await writeChecksums(dir, releaseFiles(VERSION));
  return dir;
}

/** Runs install.sh as `curl … | sh` does: the script on sh's standard input. */
function install(machine: CleanMachine, release: string, env: Record<string, string> = {}): Promise<Run> {
  return machine.run("sh", [], {
    stdin: Deno.readTextFileSync(INSTALL_SH),
    env: { MEWCODE_RELEASE_URL: `file://${release}`, ...env },
  });
}

function installed(machine: CleanMachine): string {
  return join(machine.home, ".local", "bin", "mewcode");
}

Deno.test("install.sh installs this machine's binary into a new ~/.local/bin, mode 755, and prints the PATH line", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const run = await install(machine, release);
  equal(run.code, 0, explain(run));
  const target = Deno.build.target;
  equal(
    await Deno.readTextFile(installed(machine)),
    await Deno.readTextFile(join(release, binaryName(target))),
  );
  equal((await Deno.stat(installed(machine))).mode! & 0o777, 0o755);
  deepStrictEqual(
    (await Array.fromAsync(Deno.readDir(join(machine.home, ".local", "bin")))).map((entry) => entry.name),
    ["mewcode"],
  );
  match(
    run.stdout,
    new RegExp(`^Installed ${fakeVersion(target).replace(/[()]/g, "\\$&")} to ${installed(machine)}$`, "m"),
  );
  ok(run.stdout.includes(`${join(machine.home, ".local", "bin")} is not on your PATH`), run.stdout);
  ok(run.stdout.split("\n").includes(`  ${PATH_LINE}`), run.stdout);
  equal(run.stderr, "");
  const version = await machine.run(installed(machine), ["--version"]);
  equal(version.stdout, `${fakeVersion(target)}\n`);
});

Deno.test("install.sh picks the release binary named for each OS and architecture uname reports", async (t) => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const cases: [string, string, string][] = [
    ["Linux", "x86_64", "x86_64-unknown-linux-gnu"],
    ["Linux", "amd64", "x86_64-unknown-linux-gnu"],
    ["Linux", "aarch64", "aarch64-unknown-linux-gnu"],
    ["Linux", "arm64", "aarch64-unknown-linux-gnu"],
    ["Darwin", "x86_64", "x86_64-apple-darwin"],
    ["Darwin", "arm64", "aarch64-apple-darwin"],
  ];
  for (const [os, arch, target] of cases) {
    await t.step(`${os} ${arch}`, async () => {
      const run = await install(machine, release, { MEWCODE_INSTALL_OS: os, MEWCODE_INSTALL_ARCH: arch });
      equal(run.code, 0, explain(run));
      equal((await machine.run(installed(machine), ["--version"])).stdout, `${fakeVersion(target)}\n`);
    });
  }
});

Deno.test("install.sh prints no PATH advice when ~/.local/bin is on PATH", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const run = await install(machine, release, {
    PATH: `${machine.tools}:${join(machine.home, ".local", "bin")}/`,
  });
  equal(run.code, 0, explain(run));
  ok(!run.stdout.includes("PATH"), run.stdout);
});

Deno.test("install.sh refuses a binary whose checksum does not match: exit 1, a clear message, nothing installed", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const binary = join(release, binaryName(Deno.build.target));
  await Deno.writeTextFile(binary, "#!/bin/sh\necho tampered\n");
  const refused = await install(machine, release);
  equal(refused.code, 1, explain(refused));
  match(
    refused.stderr,
    new RegExp(
      `^mewcode install: checksum mismatch for ${
        binaryName(Deno.build.target)
      }: SHA256SUMS lists [0-9a-f]{64} but the download is [0-9a-f]{64}; nothing was installed\n$`,
    ),
  );
  equal(refused.stdout, "");
  ok(!await exists(join(machine.home, ".local")), "not even ~/.local/bin was created");
});

Deno.test("install.sh keeps the installed mewcode when a new download fails its checksum", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  equal((await install(machine, release)).code, 0);
  const before = await Deno.readTextFile(installed(machine));
  await Deno.writeTextFile(join(release, binaryName(Deno.build.target)), "#!/bin/sh\necho tampered\n");
  const refused = await install(machine, release);
  equal(refused.code, 1, explain(refused));
  equal(await Deno.readTextFile(installed(machine)), before);
  deepStrictEqual(
    (await Array.fromAsync(Deno.readDir(join(machine.home, ".local", "bin")))).map((entry) => entry.name),
    ["mewcode"],
  );
});

Deno.test("install.sh refuses an unsupported platform with a message naming it and what to do instead", async (t) => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const cases: [string, string, RegExp][] = [
    [
      "FreeBSD",
      "amd64",
      /no mewcode binary for FreeBSD amd64: mewcode runs where Deno does, on Linux and macOS \(x86_64 and arm64\) and Windows/,
    ],
    ["Linux", "armv7l", /no mewcode binary for Linux armv7l/],
    ["Darwin", "ppc", /no mewcode binary for Darwin ppc/],
    [
      "MINGW64_NT-10.0-19045",
      "x86_64",
      /on Windows, download mewcode-x86_64-pc-windows-msvc\.exe from file:\/\//,
    ],
  ];
  for (const [os, arch, message] of cases) {
    await t.step(`${os} ${arch}`, async () => {
      const refused = await install(machine, release, { MEWCODE_INSTALL_OS: os, MEWCODE_INSTALL_ARCH: arch });
      equal(refused.code, 1, explain(refused));
      match(refused.stderr, message);
      ok(!await exists(join(machine.home, ".local")), "nothing was installed");
    });
  }
});

Deno.test("install.sh downloads with wget when curl is missing, and verifies with shasum when sha256sum is", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  await Deno.remove(join(machine.tools, "curl"));
  await Deno.remove(join(machine.tools, "sha256sum"));
  ok(
    await exists(join(machine.tools, "wget")) && await exists(join(machine.tools, "shasum")),
    "wget and shasum exist",
  );
  const run = await install(machine, release);
  equal(run.code, 0, explain(run));
  equal((await machine.run(installed(machine), ["--version"])).stdout, `${fakeVersion(Deno.build.target)}\n`);
  await Deno.writeTextFile(join(release, binaryName("aarch64-apple-darwin")), "tampered");
  const refused = await install(machine, release, {
    MEWCODE_INSTALL_OS: "Darwin",
    MEWCODE_INSTALL_ARCH: "arm64",
  });
  equal(refused.code, 1, explain(refused));
  match(refused.stderr, /checksum mismatch/);
});

Deno.test("install.sh stops before downloading without a downloader, a hasher, a release URL or HTTPS", async (t) => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const cases: [string, () => Promise<Run>, RegExp][] = [
    [
      "no release URL",
      () => install(machine, release, { MEWCODE_RELEASE_URL: "" }),
      /no release to install from: set MEWCODE_RELEASE_URL/,
    ],
    [
      "plain http",
      () => install(machine, release, { MEWCODE_RELEASE_URL: "http://example.com/r" }),
      /cannot download from "http:\/\/example\.com\/r": use an https:\/\//,
    ],
    ["a release without this binary", async () => {
      await Deno.writeTextFile(join(release, "SHA256SUMS"), "");
      return install(machine, release);
    }, /SHA256SUMS of file:\/\/.* lists no mewcode-/],
    ["no sha256sum nor shasum", async () => {
      await Deno.remove(join(machine.tools, "sha256sum"));
      await Deno.remove(join(machine.tools, "shasum"));
      return install(machine, release);
    }, /cannot verify a download: install sha256sum \(coreutils\) or shasum/],
    ["no curl nor wget", async () => {
      await Deno.remove(join(machine.tools, "curl"));
      await Deno.remove(join(machine.tools, "wget"));
      return install(machine, release);
    }, /cannot download: install curl or wget/],
  ];
  for (const [name, attempt, message] of cases) {
    await t.step(name, async () => {
      const refused = await attempt();
      equal(refused.code, 1, explain(refused));
      match(refused.stderr, message);
      ok(!await exists(join(machine.home, ".local")), "nothing was installed");
    });
  }
});

Deno.test("install.sh installs nothing when the verified binary does not run", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  await Deno.writeTextFile(join(release, binaryName(Deno.build.target)), "#!/bin/sh\nexit 126\n");
  await writeChecksums(release, releaseFiles(VERSION));
  const refused = await install(machine, release);
  equal(refused.code, 1, explain(refused));
  match(refused.stderr, /the downloaded mewcode-\S+ does not run on this machine; nothing was installed/);
  deepStrictEqual(await Array.fromAsync(Deno.readDir(join(machine.home, ".local", "bin"))), []);
});

Deno.test("install.sh renames the new binary into place (a link to the old file keeps it) with mode 755 under umask 077", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  equal((await install(machine, release)).code, 0);
  const old = await Deno.readTextFile(installed(machine));
  // A hard link sees the old file's content only if the path was renamed over, not rewritten.
  const link = join(machine.root, "old-mewcode");
  await Deno.link(installed(machine), link);
  await Deno.writeTextFile(join(release, binaryName(Deno.build.target)), "#!/bin/sh\necho new\n");
  await writeChecksums(release, releaseFiles(VERSION));
  const run = await machine.run("sh", ["-c", 'umask 077; exec sh "$0"', INSTALL_SH], {
    env: { MEWCODE_RELEASE_URL: `file://${release}` },
  });
  equal(run.code, 0, explain(run));
  equal(await Deno.readTextFile(link), old);
  equal(await Deno.readTextFile(installed(machine)), "#!/bin/sh\necho new\n");
  equal((await Deno.stat(installed(machine))).mode! & 0o777, 0o755);
});

Deno.test("install.sh cut short, as a dropped `curl | sh` download leaves it, does nothing: no download, no output, no install", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const script = await Deno.readTextFile(INSTALL_SH);
  const call = '{ main "$@"; }';
  const whole = script.lastIndexOf(call) + call.length;
  ok(whole >= call.length, "install.sh ends by calling main");
  const body = [script.indexOf("\nmain() {\n"), script.indexOf("\n}\n", script.indexOf("\nmain() {\n"))];
  ok(body[0]! > 0 && body[1]! > body[0]!, "install.sh defines main");
  // Every line end, and the middle of every line, up to the last cut that leaves the call unfinished.
  const cuts = new Set<number>();
  for (let at = script.indexOf("\n"); at !== -1 && at < whole; at = script.indexOf("\n", at + 1)) {
    cuts.add(at + 1);
    cuts.add(Math.floor((at + 1 + Math.min(whole, script.indexOf("\n", at + 1))) / 2));
  }
  cuts.add(whole - 1);
  // Each download reads SHA256SUMS first: its access time, reset before each run, shows one.
  const sums = join(release, "SHA256SUMS");
  const failures: string[] = [];
  for (const cut of [...cuts].filter((at) => at < whole).sort((a, b) => a - b)) {
    await Deno.utime(sums, new Date(0), new Date(0));
    const run = await machine.run("sh", [], {
      stdin: script.slice(0, cut),
      env: { MEWCODE_RELEASE_URL: `file://${release}` },
    });
    const what = [
      (await Deno.stat(sums)).atime?.getTime() !== 0 ? "downloaded SHA256SUMS" : "",
      run.stdout !== "" ? `printed ${JSON.stringify(run.stdout.slice(0, 60))}` : "",
      await exists(join(machine.home, ".local")) ? "made ~/.local" : "",
      // Cut inside main, sh cannot parse the script: the pipeline fails, so the user sees it did not install.
      cut > body[0]! + 1 && cut <= body[1]! && run.code === 0 ? "exited 0" : "",
    ].filter((part) => part !== "");
    if (what.length > 0) failures.push(`cut at byte ${cut} of ${script.length}: ${what.join(", ")}`);
    await Deno.remove(join(machine.home, ".local"), { recursive: true }).catch(() => undefined);
  }
  deepStrictEqual(failures, []);
  const complete = await install(machine, release);
  equal(complete.code, 0, explain(complete));
  ok(await exists(installed(machine)));
});

/**
 * Serves the release directory over HTTPS (the test certificate) and over plain HTTP; the HTTPS server
 * answers a request under /downgrade/ with a redirect to the same file over HTTP.
 */
function serveRelease(release: string): AsyncDisposable & { https: string } {
  const files = async (request: Request) => {
    const name = new URL(request.url).pathname.split("/").at(-1)!;
    try {
      return new Response(await Deno.readFile(join(release, name)));
    } catch {
      return new Response("not found", { status: 404 });
    }
  };
  const plain = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, files);
  const secure = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: LOCALHOST_CERT,
    key: LOCALHOST_KEY,
    onListen() {},
  }, (request) => {
    const path = new URL(request.url).pathname;
    if (!path.startsWith("/downgrade/")) return files(request);
    return Response.redirect(`http://127.0.0.1:${plain.addr.port}/release/${path.split("/").at(-1)}`, 302);
  });
  return {
    https: `https://127.0.0.1:${secure.addr.port}`,
    async [Symbol.asyncDispose]() {
      await Promise.all([plain.shutdown(), secure.shutdown()]);
    },
  };
}

Deno.test("install.sh downloads over https with curl and with wget, and refuses a redirect to plain http", async (t) => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  await using server = serveRelease(release);
  const ca = join(machine.root, "ca.pem");
  await Deno.writeTextFile(ca, LOCALHOST_CERT);
  await Deno.writeTextFile(join(machine.root, "wgetrc"), `ca_certificate = ${ca}\n`);
  // Each downloader trusts the test certificate, through its own setting.
  const trust = { CURL_CA_BUNDLE: ca, WGETRC: join(machine.root, "wgetrc") };
  for (const downloader of ["curl", "wget"]) {
    await t.step(downloader, async () => {
      if (downloader === "wget") await Deno.remove(join(machine.tools, "curl"));
      ok(await exists(join(machine.tools, downloader)), `${downloader} exists`);
      await Deno.remove(join(machine.home, ".local"), { recursive: true }).catch(() => undefined);
      const refused = await install(machine, release, {
        ...trust,
        MEWCODE_RELEASE_URL: `${server.https}/downgrade`,
      });
      equal(refused.code, 1, explain(refused));
      match(
        refused.stderr,
        downloader === "curl"
          ? /cannot download https:\S+\/downgrade\/SHA256SUMS/
          : /it was sent from http:\/\/127\.0\.0\.1:\d+\/release\/SHA256SUMS, not over https; nothing was installed/,
      );
      ok(!await exists(join(machine.home, ".local")), "nothing was installed");
      const run = await install(machine, release, {
        ...trust,
        MEWCODE_RELEASE_URL: `${server.https}/release`,
      });
      equal(run.code, 0, explain(run));
      equal(
        (await machine.run(installed(machine), ["--version"])).stdout,
        `${fakeVersion(Deno.build.target)}\n`,
      );
    });
  }
});

Deno.test("install.sh refuses to install when ~/.local/bin/mewcode is a folder or a link to one", async (t) => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const bin = join(machine.home, ".local", "bin");
  const elsewhere = join(machine.root, "elsewhere");
  await Deno.mkdir(elsewhere);
  for (const kind of ["folder", "link to a folder"]) {
    await t.step(kind, async () => {
      await Deno.remove(join(machine.home, ".local"), { recursive: true }).catch(() => undefined);
      await Deno.mkdir(bin, { recursive: true });
      if (kind === "folder") await Deno.mkdir(installed(machine));
      else await Deno.symlink(elsewhere, installed(machine));
      const refused = await install(machine, release);
      equal(refused.code, 1, explain(refused));
      match(
        refused.stderr,
        /mewcode is a folder \(or a link to one\): move it away, then run the installer again/,
      );
      deepStrictEqual(await Array.fromAsync(Deno.readDir(installed(machine))), [], "nothing went inside it");
      deepStrictEqual(
        (await Array.fromAsync(Deno.readDir(bin))).map((entry) => entry.name),
        ["mewcode"],
      );
    });
  }
});

Deno.test("install.sh with wget reads file://localhost/… from that absolute path, never from the current folder", async () => {
  // Round 17: the wget branch took file://localhost/tmp/r as the relative path localhost/tmp/r, so a
  // release planted under ./localhost/ in the current folder was installed instead.
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  await Deno.remove(join(machine.tools, "curl"));
  const planted = join(machine.root, "cwd", "localhost", release.slice(1));
  await Deno.mkdir(planted, { recursive: true });
  for await (const entry of Deno.readDir(release)) {
    await Deno.copyFile(join(release, entry.name), join(planted, entry.name));
  }
  await Deno.writeTextFile(join(planted, binaryName(Deno.build.target)), '#!/bin/sh\necho "planted"\n', {
    mode: 0o755,
  });
  await writeChecksums(planted, releaseFiles(VERSION));
  const run = await machine.run("sh", [], {
    stdin: Deno.readTextFileSync(INSTALL_SH),
    cwd: join(machine.root, "cwd"),
    env: { MEWCODE_RELEASE_URL: `file://localhost${release}` },
  });
  equal(run.code, 0, explain(run));
  equal((await machine.run(installed(machine), ["--version"])).stdout, `${fakeVersion(Deno.build.target)}\n`);
});

Deno.test("install.sh refuses a relative HOME and a ~/.local/bin that is a file, with what to do", async () => {
  await using machine = await CleanMachine.create();
  const release = await makeRelease(machine);
  const relative = await install(machine, release, { HOME: "relative/home" });
  equal(relative.code, 1, explain(relative));
  match(relative.stderr, /HOME is "relative\/home", not an absolute path/);
  await Deno.mkdir(join(machine.home, ".local"), { recursive: true });
  await Deno.writeTextFile(join(machine.home, ".local", "bin"), "a file");
  const file = await install(machine, release);
  equal(file.code, 1, explain(file));
  match(file.stderr, /\.local\/bin is not a folder: move it away/);
  equal(await Deno.readTextFile(join(machine.home, ".local", "bin")), "a file");
});

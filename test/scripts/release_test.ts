import { deepStrictEqual, equal, match, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { writeChecksums } from "../../scripts/checksums.ts";
import { releaseFiles, runRelease } from "../../scripts/release.ts";
import { binaryName } from "../../scripts/compile.ts";
import { exists } from "../_fakes/exists.ts";
import { type CliRun, type CliRunOptions, explainRun, runProgram } from "../_fakes/run_cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const VERSION =
  (JSON.parse(await Deno.readTextFile(join(ROOT, "package.json"))) as { version: string }).version;

function run(command: string, args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return runProgram(command, args, { cwd: ROOT, ...options });
}

function release(...args: string[]): Promise<CliRun> {
  return run(Deno.execPath(), ["task", "--quiet", "release", ...args]);
}

Deno.test("writeChecksums writes SHA256SUMS exactly as sha256sum does, and sha256sum -c and shasum -c accept it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-sums-" });
  try {
    const names = ["mewcode-x86_64-unknown-linux-gnu", "b.tgz", "a file.sh", "install.sh"];
    await Deno.writeTextFile(join(dir, names[0]!), "#!/bin/sh\necho fake\n");
    // Larger than one read chunk, so the hash spans chunks.
    await Deno.writeFile(
      join(dir, names[1]!),
      crypto.getRandomValues(new Uint8Array(60_000)).map((byte, index) => byte ^ index),
    );
    await Deno.writeFile(join(dir, names[2]!), new Uint8Array(300_000).fill(7));
    await Deno.writeTextFile(join(dir, names[3]!), "");
    const path = await writeChecksums(dir, names);
    equal(path, join(dir, "SHA256SUMS"));
    const written = await Deno.readTextFile(path);
    const reference = await run("sha256sum", ["--", ...[...names].sort()], { cwd: dir });
    equal(reference.code, 0, explainRun(reference));
    equal(written, reference.stdout);
    const checked = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: dir });
    equal(checked.code, 0, explainRun(checked));
    equal(checked.stdout.trim().split("\n").length, names.length);
    if (await exists("/usr/bin/shasum")) {
      const shasum = await run("shasum", ["-a", "256", "-c", "SHA256SUMS"], { cwd: dir });
      equal(shasum.code, 0, explainRun(shasum));
    }
    await Deno.writeTextFile(join(dir, names[3]!), "changed");
    const tampered = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: dir });
    notEqual(tampered.code, 0, "a changed file no longer checks");
    match(tampered.stdout, /install\.sh: FAILED/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task release --dry-run prints every step, compiling exactly what deno task compile would, and runs none", async () => {
  const before = await exists(join(ROOT, "dist", "release"));
  const dry = await release("--dry-run");
  equal(dry.code, 0, explainRun(dry));
  equal(await exists(join(ROOT, "dist", "release")), before, "the dry run creates or removes nothing");
  const lines = dry.stdout.trimEnd().split("\n");
  const compile = await run(Deno.execPath(), ["task", "--quiet", "compile", "--dry-run"]);
  equal(compile.code, 0, explainRun(compile));
  const expectedCompiles = compile.stdout.trimEnd().split("\n")
    .map((line) => line.replace(/ --output dist\//, " --output dist/release/"));
  deepStrictEqual(lines, [
    "rm -rf dist/release && mkdir -p dist/release",
    ...expectedCompiles,
    // The build for this machine must start before anything is packed or published.
    `dist/release/mewcode-${Deno.build.target} --version  # must print "mewcode ${VERSION} "`,
    "deno task bundle",
    "npm pack --pack-destination dist/release",
    "cp scripts/install.sh dist/release/install.sh",
    `(cd dist/release && sha256sum ${releaseFiles(VERSION).sort().join(" ")} > SHA256SUMS)`,
  ]);
  deepStrictEqual(
    expectedCompiles.map((line) => line.split(" ").at(-2)),
    [
      "dist/release/mewcode-x86_64-unknown-linux-gnu",
      "dist/release/mewcode-aarch64-unknown-linux-gnu",
      "dist/release/mewcode-x86_64-apple-darwin",
      "dist/release/mewcode-aarch64-apple-darwin",
      "dist/release/mewcode-x86_64-pc-windows-msvc.exe",
    ],
  );
  ok(expectedCompiles.every((line) => line.includes(" --frozen ")), "the lock file is enforced");
  deepStrictEqual(releaseFiles(VERSION).slice(-2), [`mewcode-${VERSION}.tgz`, "install.sh"]);
});

Deno.test("deno task release refuses a tag that does not name the version, and --publish or --repository without a tag", async (t) => {
  const cases: [string[], number, RegExp][] = [
    [
      ["--tag", "v99.0.0"],
      1,
      new RegExp(`the tag "v99\\.0\\.0" does not name this version: tag v${VERSION}`),
    ],
    [["--publish"], 2, /--publish and --repository need --tag/],
    [["--repository", "acme/mewcode"], 2, /need --tag/],
    [
      ["--tag", `v${VERSION}`, "--repository", "acme/mew code"],
      2,
      /Cannot use the repository "acme\/mew code"/,
    ],
    [["--target", "x"], 2, /Unknown option '--target'/],
  ];
  for (const [args, code, message] of cases) {
    await t.step(args.join(" "), async () => {
      const refused = await release("--dry-run", ...args);
      equal(refused.code, code, explainRun(refused));
      match(refused.stderr, message);
      equal(refused.stdout, "");
    });
  }
});

Deno.test("release.yml runs only deno task release, whose dry run points install.sh at the tag's release and publishes every file", async () => {
  const workflow = await Deno.readTextFile(join(ROOT, ".github", "workflows", "release.yml"));
  match(workflow, /^on:\n {2}push:\n {4}tags: \["v\*"\]$/m);
  const commands = [...workflow.matchAll(/^\s+(?:- )?run: (.+)$/gm)].map((found) => found[1]!);
  deepStrictEqual(
    commands,
    ['npx --yes deno@2.9.6 task release --tag "$GITHUB_REF_NAME" --repository "$GITHUB_REPOSITORY" --publish'],
  );
  // Every action by its commit (a tag can be moved to other code, run with the token that publishes).
  const actions = [...workflow.matchAll(/^\s+(?:- )?uses: (\S+)/gm)].map((found) => found[1]!);
  ok(actions.length > 0);
  deepStrictEqual(actions.filter((action) => !/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/.test(action)), []);
  match(workflow, /persist-credentials: false/);
  // The step exactly as the runner runs it (bash -e), plus --dry-run.
  const dry = await run("bash", ["-ec", `${commands[0]} --dry-run`], {
    env: { GITHUB_REF_NAME: `v${VERSION}`, GITHUB_REPOSITORY: "acme/mewcode" },
  });
  equal(dry.code, 0, explainRun(dry));
  const lines = dry.stdout.trimEnd().split("\n");
  equal(
    lines.find((line) => line.startsWith("sed ")),
    `sed 's|^DEFAULT_RELEASE_URL=.*|DEFAULT_RELEASE_URL="https://github.com/acme/mewcode/releases/download/v${VERSION}"|' ` +
      "scripts/install.sh > dist/release/install.sh",
  );
  equal(
    lines.at(-1),
    `gh release create v${VERSION} --verify-tag --title 'mewcode v${VERSION}' --generate-notes ` +
      [...releaseFiles(VERSION), "SHA256SUMS"].map((file) => `dist/release/${file}`).join(" "),
  );
});

Deno.test("a release stops, publishing nothing, when the binary built for this machine does not start", async () => {
  const root = await Deno.makeTempDir({ prefix: "mewcode-release-smoke-" });
  try {
    await Deno.mkdir(join(root, "dist", "release"), { recursive: true });
    const binary = `dist/release/${binaryName(Deno.build.target)}`;
    const published: string[] = [];
    const spawn = (step: { program: string; args: readonly string[] }) => {
      published.push([step.program, ...step.args].join(" "));
      return Promise.resolve(0);
    };
    const plan = [
      { kind: "smoke" as const, binary, version: VERSION },
      { kind: "run" as const, program: "gh" as const, args: ["release", "create"] },
    ];
    await Deno.writeTextFile(join(root, binary), `#!/bin/sh\necho "mewcode ${VERSION} (deno 2.9.6)"\n`, {
      mode: 0o755,
    });
    equal(await runRelease(plan, { root, spawn }), null);
    deepStrictEqual(published, ["gh release create"]);
    published.length = 0;
    await Deno.writeTextFile(join(root, binary), "#!/bin/sh\necho 'Segmentation fault' >&2\nexit 139\n", {
      mode: 0o755,
    });
    const failure = await runRelease(plan, { root, spawn });
    ok(
      failure !== null && failure.includes("the build does not run; nothing was published"),
      String(failure),
    );
    deepStrictEqual(published, []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

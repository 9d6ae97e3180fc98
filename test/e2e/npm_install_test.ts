/**
 * End to end: the npm channel on a clean machine (empty HOME and npm cache, no Deno on PATH). `npm pack` of
 * the checkout, `npm install -g` of the tarball (cold cache, then warm and offline), and `npm install -g` of
 * a checkout directory; the installed `mewcode` runs the Deno of its own npm dependency, directly.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { CleanMachine, copyPackage, explain } from "./_clean_machine.ts";
import { exists } from "../_fakes/exists.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const PACKAGE = JSON.parse(await Deno.readTextFile(join(ROOT, "package.json"))) as { version: string };
const DENO_VERSION = "2.9.6";
const NPM_QUIET = ["--no-audit", "--no-fund", "--loglevel=error"];

/**
 * Packs a copy of the checkout into `dir`; returns the tarball's path. A copy: `npm pack` runs prepare, which
 * builds bundle/ where it packs (with no Deno on this machine's PATH or beside the copy, it builds none).
 */
async function pack(machine: CleanMachine, dir: string): Promise<string> {
  const source = join(dir, "packed-checkout");
  await copyPackage(ROOT, source);
  const packed = await machine.run("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: source });
  equal(packed.code, 0, explain(packed));
  const name = packed.stdout.trim().split("\n").at(-1)!;
  equal(name, `mewcode-${PACKAGE.version}.tgz`);
  return join(dir, name);
}

/** The Deno the installed launcher would run (it prints its command instead of running it). */
async function chosenDeno(machine: CleanMachine, mewcode: string): Promise<string> {
  const printed = await machine.run(mewcode, ["--version"], { env: { MEWCODE_PRINT_COMMAND: "1" } });
  equal(printed.code, 0, explain(printed));
  return printed.stdout.split("\n")[0]!;
}

Deno.test("npm install -g of the packed tarball gives a mewcode that runs --version, tools, doctor and -p from a clean HOME", async (t) => {
  await using machine = await CleanMachine.create();
  const tarball = await pack(machine, machine.root);
  const prefix = join(machine.root, "prefix");
  const mewcode = join(prefix, "bin", "mewcode");

  await t.step("a cold install downloads Deno with the package", async () => {
    const started = performance.now();
    const installed = await machine.run("npm", [
      "install",
      "--global",
      "--prefix",
      prefix,
      ...NPM_QUIET,
      tarball,
    ]);
    equal(installed.code, 0, explain(installed));
    console.log(`    cold npm install -g: ${Math.round(performance.now() - started)} ms`);
    equal(
      await Deno.realPath(mewcode),
      join(prefix, "lib", "node_modules", "mewcode", "scripts", "mewcode"),
      "the bin is the POSIX launcher itself, no node shim",
    );
    equal(
      await chosenDeno(machine, mewcode),
      join(prefix, "lib", "node_modules", "mewcode", "node_modules", "deno", "deno"),
    );
  });

  await t.step("--version", async () => {
    const version = await machine.run(mewcode, ["--version"]);
    equal(version.code, 0, explain(version));
    equal(version.stdout, `mewcode ${PACKAGE.version} (deno ${DENO_VERSION})\n`);
  });

  await t.step(
    "tools (the first run fetches the npm dependencies deno.lock pins into Deno's cache in HOME)",
    async () => {
      const tools = await machine.run(mewcode, ["tools"]);
      equal(tools.code, 0, explain(tools));
      for (const name of ["ReadFile", "Glob", "Grep", "EditFile", "WriteFile", "Bash"]) {
        match(
          tools.stdout,
          new RegExp(`^${name} `, "m"),
        );
      }
      ok(await exists(join(machine.home, ".cache", "deno", "npm")), "Deno's cache is in the clean HOME");
    },
  );

  await t.step("doctor: the tool workers start from the installed files", async () => {
    const doctor = await machine.run(mewcode, ["doctor"]);
    match(doctor.stdout, new RegExp(`^Deno: ${DENO_VERSION.replaceAll(".", "\\.")} `, "m"));
    match(doctor.stdout, /^ {2}read-only: ok: reading the workspace is allowed$/m);
    match(doctor.stdout, /^ {2}writer: ok: reading the workspace is allowed$/m);
    if (await exists("/usr/bin/bwrap")) equal(doctor.code, 0, explain(doctor));
  });

  await t.step("-p against the fake Anthropic server, with a tool call", async () => {
    const file = join(machine.workspace, "greeting.txt");
    await Deno.writeTextFile(file, "hello from the workspace\n");
    await using server = await startFakeAnthropic([
      turn().toolUse("ReadFile", { path: file }, { id: "toolu_1" }).stop("tool_use"),
      turn().text("It says hello.").stop("end_turn"),
    ]);
    const run = await machine.run(mewcode, ["-p", "what does greeting.txt say?"], { env: server.env() });
    equal(run.code, 0, explain(run));
    equal(run.stdout, "It says hello.\n");
    equal(server.remaining, 0);
    match(JSON.stringify(server.requests[1]?.body), /hello from the workspace/);
    ok(await exists(join(machine.home, ".mewcode")), "mewcode's state is in the clean HOME");
  });

  await t.step(
    "a warm cache installs offline; without install scripts the platform package's Deno runs",
    async () => {
      await using warm = await CleanMachine.create({ npmCache: machine.npmCache });
      const again = join(warm.root, "prefix");
      const started = performance.now();
      const installed = await warm.run("npm", [
        "install",
        "--global",
        "--prefix",
        again,
        "--offline",
        "--ignore-scripts",
        ...NPM_QUIET,
        tarball,
      ]);
      equal(installed.code, 0, explain(installed));
      console.log(`    warm npm install -g --offline: ${Math.round(performance.now() - started)} ms`);
      const modules = join(again, "lib", "node_modules", "mewcode", "node_modules");
      ok(!await exists(join(modules, "deno", "deno")), "deno's install script did not run");
      match(
        await chosenDeno(warm, join(again, "bin", "mewcode")),
        new RegExp(`^${modules}/@deno/[a-z0-9-]+/deno$`),
      );
      const version = await warm.run(join(again, "bin", "mewcode"), ["--version"]);
      equal(version.code, 0, explain(version));
      equal(version.stdout, `mewcode ${PACKAGE.version} (deno ${DENO_VERSION})\n`);
    },
  );
});

Deno.test("npm install -g of a checkout directory links it; mewcode runs once the checkout has its npm install", async () => {
  await using machine = await CleanMachine.create();
  const checkout = join(machine.root, "checkout");
  await copyPackage(ROOT, checkout);
  const prefix = join(machine.root, "prefix");
  const mewcode = join(prefix, "bin", "mewcode");
  const linked = await machine.run("npm", [
    "install",
    "--global",
    "--prefix",
    prefix,
    ...NPM_QUIET,
    checkout,
  ]);
  equal(linked.code, 0, explain(linked));
  equal(
    await Deno.realPath(join(prefix, "lib", "node_modules", "mewcode")),
    checkout,
    "npm links the directory",
  );

  // npm installs no dependencies into a linked directory: the launcher, found through two links, names the
  // real checkout in its advice.
  const bare = await machine.run(mewcode, ["--version"]);
  equal(bare.code, 127, explain(bare));
  ok(bare.stderr.includes(`npm install --prefix "${checkout}"`), bare.stderr);

  // That install's prepare also builds the bundle (scripts/prepare), which the launcher then runs.
  // In the foreground: prepare's own words (why a bundle was not built) reach the failure's message.
  const installed = await machine.run("npm", [
    "install",
    "--prefix",
    checkout,
    "--foreground-scripts",
    ...NPM_QUIET,
  ]);
  equal(installed.code, 0, explain(installed));
  const printed = await machine.run(mewcode, ["--version"], { env: { MEWCODE_PRINT_COMMAND: "1" } });
  const argv = printed.stdout.trimEnd().split("\n");
  deepStrictEqual(
    [argv[0], argv.at(-2)],
    [join(checkout, "node_modules", "deno", "deno"), join(checkout, "bundle", "main.js")],
    explain(installed),
  );
  const version = await machine.run(mewcode, ["--version"]);
  equal(version.code, 0, explain(version));
  equal(version.stdout, `mewcode ${PACKAGE.version} (deno ${DENO_VERSION})\n`);

  // A node_modules/deno of another version (a checkout installed before the pin moved) is passed over.
  const denoPackage = join(checkout, "node_modules", "deno", "package.json");
  await Deno.writeTextFile(
    denoPackage,
    (await Deno.readTextFile(denoPackage)).replace(`"version": "${DENO_VERSION}"`, '"version": "2.0.0"'),
  );
  match(await chosenDeno(machine, mewcode), new RegExp(`^${checkout}/node_modules/@deno/[a-z0-9-]+/deno$`));
});

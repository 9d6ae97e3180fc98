/**
 * End to end: a release built by scripts/release.ts in a copy of the checkout — every step real (clean,
 * `npm pack`, install.sh pointed at the release, SHA256SUMS) except `deno compile`, which needs to download
 * Deno's runtime: a fake compiler writes a shell script at each --output. Then the release's own install.sh,
 * with no settings, installs from it.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { readRuntimeFlags } from "../../scripts/compile.ts";
import { releaseFiles, releasePlan, runRelease, type Spawn } from "../../scripts/release.ts";
import { CleanMachine, copyPackage, explain } from "./_clean_machine.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const VERSION =
  (JSON.parse(await Deno.readTextFile(join(ROOT, "package.json"))) as { version: string }).version;

/** A checkout to release: what npm packs, and the install script. */
async function checkoutCopy(machine: CleanMachine): Promise<string> {
  const checkout = join(machine.root, "checkout");
  await copyPackage(ROOT, checkout);
  await Deno.copyFile(join(ROOT, "scripts", "install.sh"), join(checkout, "scripts", "install.sh"));
  return checkout;
}

/** `deno compile` writes a script printing its target; npm runs for real on the clean machine. */
function fakeCompiler(machine: CleanMachine, failing: string | null = null): Spawn {
  return async (step, cwd) => {
    if (step.program !== "deno") return (await machine.run(step.program, step.args, { cwd })).code;
    const target = step.args[step.args.indexOf("--target") + 1]!;
    if (target === failing) return 1;
    const output = join(cwd, step.args[step.args.indexOf("--output") + 1]!);
    await Deno.writeTextFile(output, `#!/bin/sh\necho "mewcode ${VERSION} (compiled for ${target})"\n`, {
      mode: 0o755,
    });
    return 0;
  };
}

Deno.test("a release holds every binary, the npm tarball, an install.sh that installs from it, and SHA256SUMS", async () => {
  await using machine = await CleanMachine.create();
  const checkout = await checkoutCopy(machine);
  const releaseDir = join(checkout, "dist", "release");
  const plan = releasePlan({
    version: VERSION,
    flags: await readRuntimeFlags(),
    publishTag: null,
    releaseUrl: `file://${releaseDir}`,
  });
  const logged: string[] = [];
  const failure = await runRelease(plan, {
    root: checkout,
    spawn: fakeCompiler(machine),
    log: (line) => logged.push(line),
  });
  equal(failure, null);
  equal(logged.length, plan.length);
  deepStrictEqual(
    (await Array.fromAsync(Deno.readDir(releaseDir))).map((entry) => entry.name).sort(),
    [...releaseFiles(VERSION), "SHA256SUMS"].sort(),
  );
  const checked = await machine.run("sha256sum", ["-c", "SHA256SUMS"], { cwd: releaseDir });
  equal(checked.code, 0, explain(checked));

  const listed = await machine.run("tar", ["-tzf", `mewcode-${VERSION}.tgz`], { cwd: releaseDir });
  equal(listed.code, 0, explain(listed));
  const packed = listed.stdout.split("\n");
  for (
    const file of ["package/package.json", "package/main.ts", "package/scripts/mewcode", "package/deno.lock"]
  ) {
    ok(packed.includes(file), `${file} is packed`);
  }
  ok(!packed.some((file) => file.startsWith("package/test/")), "tests are not packed");

  // The release's install.sh, as `curl …/install.sh | sh` runs it: no settings at all.
  const installed = await machine.run("sh", [], {
    stdin: await Deno.readTextFile(join(releaseDir, "install.sh")),
  });
  equal(installed.code, 0, explain(installed));
  const version = await machine.run(join(machine.home, ".local", "bin", "mewcode"), ["--version"]);
  equal(version.stdout, `mewcode ${VERSION} (compiled for ${Deno.build.target})\n`);
});

Deno.test("a release stops at a failed compile, says which, and writes no SHA256SUMS", async () => {
  await using machine = await CleanMachine.create();
  const checkout = await checkoutCopy(machine);
  const plan = releasePlan({
    version: VERSION,
    flags: await readRuntimeFlags(),
    publishTag: null,
    releaseUrl: null,
  });
  const failure = await runRelease(plan, {
    root: checkout,
    spawn: fakeCompiler(machine, "aarch64-apple-darwin"),
  });
  match(
    failure ?? "",
    /^deno compile .* --target aarch64-apple-darwin .* failed with exit 1 \(a target's first compile downloads its runtime from dl\.deno\.land\)$/,
  );
  const left = (await Array.fromAsync(Deno.readDir(join(checkout, "dist", "release")))).map((entry) =>
    entry.name
  );
  deepStrictEqual(left.sort(), [
    "mewcode-aarch64-unknown-linux-gnu",
    "mewcode-x86_64-apple-darwin",
    "mewcode-x86_64-unknown-linux-gnu",
  ]);
});

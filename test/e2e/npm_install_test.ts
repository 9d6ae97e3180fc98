import { equal, match } from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const output = await new Deno.Command(command, { args, cwd, env, stdout: "piped", stderr: "piped" })
    .output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("npm install -g of the packed checkout gives a working mewcode command", async () => {
  const scratch = await Deno.makeTempDir({ prefix: "mewcode-npm-" });
  try {
    const packed = await run("npm", ["pack", "--silent", "--pack-destination", scratch], ROOT);
    equal(packed.code, 0, packed.stderr);
    const tarball = `${scratch}/${packed.stdout.trim().split("\n").at(-1)}`;
    const prefix = `${scratch}/prefix`;
    const installed = await run(
      "npm",
      ["install", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "--prefer-offline", tarball],
      scratch,
    );
    equal(installed.code, 0, installed.stderr);
    const elsewhere = `${scratch}/elsewhere`;
    await Deno.mkdir(elsewhere);
    // Only the installed package may provide Deno: no deno on PATH.
    const version = await run(`${prefix}/bin/mewcode`, ["--version"], elsewhere, { PATH: "/usr/bin:/bin" });
    equal(version.code, 0, version.stderr);
    match(version.stdout, /^mewcode \d+\.\d+\.\d+ \(deno 2\.9\.6\)/);
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
});

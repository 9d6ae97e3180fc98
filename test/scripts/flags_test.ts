import { deepStrictEqual, equal, ok, throws } from "node:assert/strict";
import { parseRuntimeFlags, TARGETS } from "../../scripts/compile.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function launcherCommand(): Promise<string[]> {
  const output = await new Deno.Command(LAUNCHER, {
    args: ["--version"],
    env: { MEWCODE_PRINT_COMMAND: "1" },
    stdout: "piped",
  }).output();
  equal(output.code, 0);
  return new TextDecoder().decode(output.stdout).trimEnd().split("\n");
}

async function compileCommands(): Promise<string[][]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "compile", "--dry-run"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout).trim().split("\n").map((line) => line.split(" "));
}

function flagsBetween(argv: string[], after: string, before: string): string[] {
  const start = argv.indexOf(after);
  const end = argv.indexOf(before, start);
  ok(start >= 0 && end > start, `found ${after} … ${before} in ${argv.join(" ")}`);
  return argv.slice(start + 1, end);
}

Deno.test("deno task compile bakes in exactly the runtime flags scripts/mewcode runs with", async () => {
  const launcherFlags = flagsBetween(await launcherCommand(), "run", "--quiet");
  const commands = await compileCommands();
  deepStrictEqual(commands.map((argv) => argv[argv.indexOf("--target") + 1]), [...TARGETS]);
  for (const argv of commands) {
    deepStrictEqual(flagsBetween(argv, "compile", "--config"), launcherFlags);
    ok(
      argv.includes("--include") && argv[argv.indexOf("--include") + 1] === "workers/",
      "workers are included",
    );
  }
});

Deno.test("the runtime flags never prompt, enable worker permissions and grant no ffi, imports or system information but the uid", async () => {
  const flags = flagsBetween(await launcherCommand(), "run", "--quiet");
  ok(flags.includes("--no-prompt"));
  ok(flags.includes("--unstable-worker-options"));
  for (const broad of ["-A", "--allow-all", "--allow-ffi", "--allow-import"]) {
    ok(!flags.some((flag) => flag === broad || flag.startsWith(`${broad}=`)), `${broad} is not granted`);
  }
  deepStrictEqual(flags.filter((flag) => flag.startsWith("--allow-sys")), ["--allow-sys=uid"]);
  // Programs by absolute path only: a list of names would be resolved through PATH when Deno starts.
  ok(flags.includes("--allow-run"));
  ok(!flags.some((flag) => flag.startsWith("--allow-run=")));
});

Deno.test("scripts/mewcode runs main.ts of its own checkout (or its bundle) with the workspace as the caller's cwd", async () => {
  const argv = await launcherCommand();
  equal(argv.at(-1), "--version");
  // test/e2e/bundle_e2e_test.ts tells when the bundle runs; this checkout may have built one.
  if (argv.at(-2) === `${ROOT}bundle/main.js`) {
    equal(argv.at(-3), "--no-config");
    return;
  }
  equal(argv.at(-2), `${ROOT}main.ts`);
  equal(argv[argv.indexOf("--config") + 1], `${ROOT}deno.json`);
});

Deno.test("the flags end at the first comment line, for the launcher and for deno compile alike", async () => {
  const flagsFile = "--no-prompt\n\n--allow-env\n# why: --allow-all would be a mistake here\n#\n# more\n";
  deepStrictEqual(parseRuntimeFlags(flagsFile), ["--no-prompt", "--allow-env"]);
  throws(() => parseRuntimeFlags(`${flagsFile}--allow-ffi\n`), /"--allow-ffi" lies below the comments/);

  // The launcher, copied next to such a file, passes the flags above the comments and nothing below them.
  const directory = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${directory}/scripts`);
    await Deno.copyFile(LAUNCHER, `${directory}/scripts/mewcode`);
    await Deno.chmod(`${directory}/scripts/mewcode`, 0o755);
    await Deno.writeTextFile(`${directory}/scripts/runtime_flags.txt`, `${flagsFile}--allow-ffi\n`);
    const output = await new Deno.Command(`${directory}/scripts/mewcode`, {
      args: ["--version"],
      env: { MEWCODE_PRINT_COMMAND: "1", MEWCODE_DENO: Deno.execPath() },
      stdout: "piped",
    }).output();
    equal(output.code, 0);
    const argv = new TextDecoder().decode(output.stdout).trimEnd().split("\n");
    deepStrictEqual(flagsBetween(argv, "run", "--quiet"), ["--no-prompt", "--allow-env"]);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

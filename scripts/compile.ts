/**
 * `deno task compile`: builds dist/mewcode-<target> (`.exe` for Windows) for every supported target with the
 * runtime flags of scripts/runtime_flags.txt (the same ones scripts/mewcode uses), the worker entry points
 * and src/ (for the modules loaded by `lazyImport`) included, and deno.lock enforced.
 *
 *   deno task compile                      all targets
 *   deno task compile --target T [...]     only these targets
 *   deno task compile --dry-run            print the commands instead of running them
 *
 * The first compile for a target downloads that target's Deno runtime from dl.deno.land.
 *
 * @module
 */
import { parseArgs } from "node:util";

/** The targets mewcode is built for. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

const ROOT = new URL("../", import.meta.url);

/**
 * Reads the runtime flags: one per line up to the first comment line, as scripts/mewcode reads them. A flag
 * below the comments would be baked into the binary but not passed by the launcher: it is refused.
 */
export async function readRuntimeFlags(): Promise<string[]> {
  return parseRuntimeFlags(await Deno.readTextFile(new URL("scripts/runtime_flags.txt", ROOT)));
}

/** The flags of a runtime flags file's text (see `readRuntimeFlags`). */
export function parseRuntimeFlags(text: string): string[] {
  const lines = text.split("\n").map((line) => line.trim());
  const end = lines.findIndex((line) => line.startsWith("#"));
  const misplaced = end === -1
    ? undefined
    : lines.slice(end).find((line) => line !== "" && !line.startsWith("#"));
  if (misplaced !== undefined) {
    throw new Error(`scripts/runtime_flags.txt: "${misplaced}" lies below the comments; flags come first`);
  }
  return lines.slice(0, end === -1 ? lines.length : end).filter((line) => line !== "");
}

/** The file name of a target's binary: `mewcode-<target>`, with `.exe` for Windows. */
export function binaryName(target: string): string {
  // Named in full: for a Windows target, deno compile replaces whatever follows the last "." with "exe".
  return `mewcode-${target}${target.includes("-windows-") ? ".exe" : ""}`;
}

/** Where `compileArguments` writes the binary. */
export interface CompileOptions {
  /** The output directory, relative to the checkout; "dist" unless given. */
  outputDir?: string;
}

/** The `deno compile` arguments for one target. */
export function compileArguments(
  flags: readonly string[],
  target: string,
  options: CompileOptions = {},
): string[] {
  return [
    "compile",
    ...flags,
    "--config",
    "deno.json",
    // The npm dependencies exactly as deno.lock pins them: a stale lock fails the build.
    "--frozen",
    "--include",
    "workers/",
    // Modules mewcode imports by a URL the module graph does not follow (src/common/lazy_import.ts).
    "--include",
    "src/",
    "--target",
    target,
    "--output",
    `${options.outputDir ?? "dist"}/${binaryName(target)}`,
    "main.ts",
  ];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { target: { type: "string", multiple: true }, "dry-run": { type: "boolean" } },
  });
  const targets = values.target ?? [...TARGETS];
  for (const target of targets) {
    if (!(TARGETS as readonly string[]).includes(target)) {
      console.error(`compile: unknown target "${target}": use one of ${TARGETS.join(", ")}`);
      return 2;
    }
  }
  const flags = await readRuntimeFlags();
  for (const target of targets) {
    const args = compileArguments(flags, target);
    if (values["dry-run"]) {
      console.log(["deno", ...args].join(" "));
      continue;
    }
    const status = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT }).spawn().status;
    if (!status.success) {
      console.error(
        `compile: building ${target} failed (exit ${status.code}); the first build of a target downloads ` +
          "its Deno runtime, which needs access to dl.deno.land",
      );
      return status.code || 1;
    }
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main());

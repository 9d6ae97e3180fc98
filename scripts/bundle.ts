/**
 * `deno task bundle`: builds bundle/, mewcode as plain JavaScript, which scripts/mewcode runs instead of the
 * TypeScript sources whenever no source file is newer than the bundle. A start from the sources loads each
 * module's transpiled copy from Deno's cache with its inline source map (2.7 times the source's size) and
 * builds a module graph for every lazily imported part; the bundle loads a few minified files: a one-shot
 * run's first request goes out ~25 ms sooner (BENCHMARKS.md), and a worker starts sooner.
 *
 *   deno task bundle                 build bundle/ next to the sources
 *   deno task bundle --out DIR       build into DIR instead (tests)
 *
 * npm's prepare (scripts/prepare) runs it on `npm install` in a checkout and on `npm pack`.
 *
 * How: the sources are copied to a temporary folder and rewritten there, never in place:
 * - each `lazyImport(new URL("./x.ts", import.meta.url))` (and `lazyModule`) becomes
 *   `lazyImport(() => import("./x.ts"))`, which the bundler follows (src/common/lazy_import.ts takes both);
 * - a worker entry's URL becomes the URL of its bundled file, and a folder's (the program folder, which the
 *   sandbox protects) the same folder seen from the bundle, which lies one level below the checkout;
 * - any other use of `import.meta.url` fails the build: its meaning would change in the bundle.
 * Then `deno bundle` (esbuild) writes each entry point (main.ts and the worker entries) on its own, all into
 * one flat folder, with code splitting, minified, names not kept (see SPLIT_BUNDLE_FLAGS).
 * Deno reads every `import("./literal")` of a module it loads, with all they import, whether or not it runs: each
 * `import("./chunk.js")` the bundler wrote becomes `import(new URL("./chunk.js", import.meta.url).href)`,
 * which Deno loads only when it runs. The chunks a one-shot run loads on its way to its first request are then
 * merged into one file per step of that way (LOAD_PATH, scripts/bundle_groups.ts), and the top-level
 * functions of that way's files are written so that V8 compiles them with their file (scripts/bundle_eager.ts).
 * The result is checked (each entry exists, no TypeScript module or literal chunk import is left,
 * `main.js --version` prints the version) and renamed into place whole.
 *
 * `stamp` in the bundle carries the time the copy was taken (as its modification time): scripts/mewcode runs
 * the bundle only while no source file is newer, so an edit made during or after a build runs the sources.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { compileEagerly, EagerCompileError } from "./bundle_eager.ts";
import { BundleGroupError, groupLoadPath, stepEntry } from "./bundle_groups.ts";

const ROOT = resolve(new URL("../", import.meta.url).pathname);

/** What the bundle is built from, relative to the checkout: the launcher's freshness check names the same. */
export const BUNDLE_SOURCES = ["main.ts", "deno.json", "deno.lock", "src", "workers"] as const;

/** The worker entry points (workers/<name>.ts): each becomes bundle/<name>.js. */
export const WORKER_ENTRIES = [
  "tool_worker",
  "writer_worker",
  "shell_worker",
  "permission_check_worker",
] as const;

/**
 * The entry points a one-shot run (`mewcode -p`) imports in turn before its first request, by their source
 * module's base name: the chunks each one reaches are merged into one file (scripts/bundle_groups.ts).
 */
export const LOAD_PATH = ["main", "workspace", "print_mode", "anthropic_provider"] as const;

/**
 * How `deno bundle` writes each entry point: for Deno, ES modules, split into chunks, minified.
 *
 * Names are not kept (esbuild's --keep-names): it gives every function and class its name back at load time,
 * one `Object.defineProperty` call each, ~400 before a one-shot run's first request, whose helper grew hot
 * enough for V8 to optimize it on a background thread meanwhile. That was the process's first background job,
 * and on a machine without /sys/devices/system/cpu/cpu0/tsc_freq_khz (virtual machines) the first one makes
 * abseil, inside V8, time the CPU's clock by sleeping 3 ms, while the main thread waited on the job between
 * the request's connect and its write. Measured in alternating fresh processes (31 each, twice), the first
 * request left 5.8 and 6.5 ms sooner without them. What mewcode shows of a class's name is written out (each
 * error class whose name a report or event carries sets `name` itself: src/llm/errors.ts); a stack trace from
 * the bundle shows minified function names, at the bundle file's line and column.
 */
export const SPLIT_BUNDLE_FLAGS = [
  "--platform",
  "deno",
  "--format",
  "esm",
  "--code-splitting",
  "--minify",
] as const;

/** The file whose modification time is the moment the sources were copied. */
export const STAMP_FILE = "stamp";

/** A `new URL("<relative>", import.meta.url)` as the sources write it. */
const MODULE_URL = /new URL\(\s*"(\.{1,2}\/[^"]*)",\s*import\.meta\.url\s*\)/g;
/** What comes right before a URL passed to `lazyImport` or `lazyModule` (type arguments included). */
const LAZY_CALL_BEFORE = /\b(?:lazyImport|lazyModule)\s*(?:<[^;]*?>)?\s*\(\s*$/;

/** Why the bundle could not be built. */
export class BundleError extends Error {
  override name = "BundleError";
}

/**
 * Rewrites one source file's module-relative URLs for the bundle (see the module doc). `file` is its path
 * relative to the checkout; returns the new text.
 */
export function rewriteForBundle(file: string, text: string): string {
  return text.replace(MODULE_URL, (match, specifier: string, offset: number) => {
    const target = join(dirname(file), specifier);
    const worker = /^workers\/([a-z_]+)\.ts$/.exec(target)?.[1];
    if (worker !== undefined) {
      if (!(WORKER_ENTRIES as readonly string[]).includes(worker)) {
        throw new BundleError(`${file}: ${match} names a worker that is not a bundle entry (WORKER_ENTRIES)`);
      }
      return `new URL("./${worker}.js", import.meta.url)`;
    }
    if (specifier.endsWith("/")) {
      // The bundle's files lie in bundle/, one level below the checkout.
      const fromRoot = target === "." || target === "./" ? "" : `${target.replace(/\/?$/, "/")}`;
      if (fromRoot.startsWith("..")) {
        throw new BundleError(`${file}: ${match} names a folder outside the checkout`);
      }
      return `new URL("../${fromRoot}", import.meta.url)`;
    }
    if (specifier.endsWith(".ts") && LAZY_CALL_BEFORE.test(text.slice(Math.max(0, offset - 400), offset))) {
      return `() => import(${JSON.stringify(specifier)})`;
    }
    throw new BundleError(
      `${file}: ${match} is neither a lazy import, a worker entry nor a folder: its meaning in the bundle is ` +
        "unknown; teach scripts/bundle.ts what it is",
    );
  });
}

/**
 * Hides a bundled file's imports of its chunks from Deno's module graph (see the module doc): `names` are
 * the bundle's file names.
 */
export function hideChunkImports(text: string, names: ReadonlySet<string>): string {
  return text.replace(/\bimport\("\.\/([^"]+\.js)"\)/g, (match, name: string) => {
    if (!names.has(name)) throw new BundleError(`the bundle imports ${match}, which it does not hold`);
    return `import(new URL("./${name}",import.meta.url).href)`;
  });
}

/**
 * Builds the bundle of the checkout at `options.root` (this script's own unless given) into `out`,
 * replacing what is there; returns the bundle's file names.
 */
export async function buildBundle(out: string, options: { root?: string } = {}): Promise<string[]> {
  const root = options.root ?? ROOT;
  const work = await Deno.makeTempDir({ prefix: "mewcode-bundle-" });
  // Built beside `out` (one file system), then renamed into place.
  await Deno.mkdir(dirname(out), { recursive: true });
  const built = `${out}.new-${crypto.randomUUID().slice(0, 8)}`;
  try {
    const copiedAt = new Date();
    const source = join(work, "source");
    for (const entry of BUNDLE_SOURCES) await copyRewritten(join(root, entry), join(source, entry), entry);
    // Entry points in the copy's root, so the bundler writes every file into one flat folder: a URL between
    // two of them means the same wherever a module's code lands.
    for (const worker of WORKER_ENTRIES) {
      await Deno.writeTextFile(join(source, `${worker}.ts`), `import "./workers/${worker}.ts";\n`);
    }
    const entries = ["main.ts", ...WORKER_ENTRIES.map((worker) => `${worker}.ts`)];
    // Each entry point bundled on its own: shared by no other entry, the code one of them loads at start
    // lies in a few chunks instead of one per set of entries sharing it (each file costs a load).
    // The first alone: with an empty Deno cache, each `deno bundle` installs esbuild into it, and several at
    // once race on its temporary file ("failed to copy esbuild binary"; seen under load in a clean HOME).
    const first = await bundleEntry(source, entries[0]!, built);
    const rest = await Promise.all(entries.slice(1).map((entry) => bundleEntry(source, entry, built)));
    const failures = [first, ...rest].filter((failure) => failure !== null);
    if (failures.length > 0) throw new BundleError(failures.join("\n"));
    const names = new Set<string>();
    for await (const entry of Deno.readDir(built)) {
      if (!entry.isFile || !entry.name.endsWith(".js")) {
        throw new BundleError(`the bundler wrote ${entry.name}, which is not a JavaScript file`);
      }
      names.add(entry.name);
    }
    for (const entry of entries) {
      if (!names.has(entry.replace(/\.ts$/, ".js"))) {
        throw new BundleError(`the bundle has no ${entry} entry`);
      }
    }
    for (const name of names) {
      const path = join(built, name);
      const text = hideChunkImports(await Deno.readTextFile(path), names);
      const typescript = /(?:\bfrom\s*|\bimport\s*\(\s*|\bnew URL\(\s*)["'`][^"'`]*\.ts["'`]/.exec(text);
      if (typescript !== null) {
        throw new BundleError(`${name} still names a TypeScript module: ${typescript[0]}`);
      }
      await Deno.writeTextFile(path, text);
    }
    try {
      const groups = await groupLoadPath(built, {
        steps: LOAD_PATH,
        workers: WORKER_ENTRIES.map((worker) => `${worker}.js`),
      });
      const grouped = new Set<string>();
      for await (const entry of Deno.readDir(built)) grouped.add(entry.name);
      await compileEagerly(built, [
        ...LOAD_PATH.map((step) => stepEntry(grouped, step)),
        ...groups.map((group) => group.file),
      ]);
    } catch (error) {
      if (error instanceof BundleGroupError || error instanceof EagerCompileError) {
        throw new BundleError(error.message);
      }
      throw error;
    }
    await checkVersion(root, built);
    const stamp = join(built, STAMP_FILE);
    await Deno.writeTextFile(
      stamp,
      "The sources were copied for this bundle at this file's modification time (scripts/bundle.ts).\n",
    );
    await Deno.utime(stamp, copiedAt, copiedAt);
    const written: string[] = [];
    for await (const entry of Deno.readDir(built)) if (entry.name.endsWith(".js")) written.push(entry.name);
    await replaceFolder(built, out);
    return written.sort();
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(built, { recursive: true }).catch(() => {});
  }
}

/**
 * Runs `deno bundle` for one entry point of the copy at `source`, writing into `out`: null, or why it failed.
 * Chunks are named by their content, so the entries' chunks share one folder without clashing.
 */
async function bundleEntry(source: string, entry: string, out: string): Promise<string | null> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--config",
      join(source, "deno.json"),
      "--frozen",
      ...SPLIT_BUNDLE_FLAGS,
      "--outdir",
      out,
      join(source, entry),
    ],
    cwd: source,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.success) return null;
  return `deno bundle ${entry} failed (exit ${output.code}): ${
    new TextDecoder().decode(output.stderr).trim()
  }`;
}

/** Copies a source file or folder, rewriting every TypeScript file for the bundle. */
async function copyRewritten(from: string, to: string, name: string): Promise<void> {
  const info = await Deno.lstat(from);
  if (info.isDirectory) {
    await Deno.mkdir(to, { recursive: true });
    for await (const entry of Deno.readDir(from)) {
      await copyRewritten(join(from, entry.name), join(to, entry.name), `${name}/${entry.name}`);
    }
    return;
  }
  if (!info.isFile) throw new BundleError(`${name} is not a regular file`);
  await Deno.mkdir(dirname(to), { recursive: true });
  if (!name.endsWith(".ts")) {
    await Deno.copyFile(from, to);
    return;
  }
  await Deno.writeTextFile(to, rewriteForBundle(name, await Deno.readTextFile(from)));
}

/** Runs the bundle's main.js with `--version`: a bundle that cannot start is never put in place. */
async function checkVersion(root: string, built: string): Promise<void> {
  const config = JSON.parse(await Deno.readTextFile(join(root, "deno.json"))) as { version: string };
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", "--no-prompt", "--quiet", join(built, "main.js"), "--version"],
    stdout: "piped",
    stderr: "piped",
    env: { DENO_NO_UPDATE_CHECK: "1" },
  }).output();
  const printed = new TextDecoder().decode(output.stdout);
  if (!output.success || !printed.startsWith(`mewcode ${config.version} `)) {
    throw new BundleError(
      `the bundle does not start: main.js --version exited ${output.code} and printed ` +
        JSON.stringify(printed + new TextDecoder().decode(output.stderr)),
    );
  }
}

/**
 * Puts the folder `built` (beside `out`) at `out` in two renames: `out` holds the old bundle, nothing for an
 * instant (the launcher then runs the sources) or the new one, never a mix.
 */
async function replaceFolder(built: string, out: string): Promise<void> {
  const old = `${out}.old-${crypto.randomUUID().slice(0, 8)}`;
  let moved = false;
  try {
    await Deno.rename(out, old);
    moved = true;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.rename(built, out);
  if (moved) await Deno.remove(old, { recursive: true });
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string" } },
  });
  const out = resolve(values.out ?? join(ROOT, "bundle"));
  const started = performance.now();
  try {
    const names = await buildBundle(out);
    console.log(
      `bundle: ${names.length} files in ${relative(Deno.cwd(), out) || "."} ` +
        `(${
          Math.round(performance.now() - started)
        } ms); scripts/mewcode runs it (in a git checkout, while ` +
        "no source is newer)",
    );
    return 0;
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    console.error(`bundle: ${error.message}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main());

/**
 * mewcode as an installed package runs it, for the benchmarks that measure it as deployed and the tests that
 * run it so: a copy of the files the npm package ships (package.json's `files`), with the bundle built into
 * it (scripts/bundle.ts) or without it, and the checkout's node_modules linked beside them, so that its
 * launcher finds the same Deno.
 * The copy has no .git: like an installed package, its launcher runs its bundle unchecked.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { buildBundle } from "../bundle.ts";

const CHECKOUT = new URL("../../", import.meta.url).pathname;

/** Makes the package in `dir` (with its bundle unless `bundle` is false); returns its launcher's path. */
export async function installedPackage(dir: string, options: { bundle: boolean }): Promise<string> {
  const { files } = JSON.parse(await Deno.readTextFile(join(CHECKOUT, "package.json"))) as {
    files: string[];
  };
  // Not a bundle the checkout may hold: it may be older than the sources.
  for (const entry of [...files.filter((file) => !file.startsWith("bundle")), "package.json"]) {
    const target = join(dir, entry.replace(/\/$/, ""));
    await Deno.mkdir(dirname(target), { recursive: true });
    const copied = await new Deno.Command("cp", {
      args: ["-R", join(CHECKOUT, entry.replace(/\/$/, "")), target],
      stderr: "piped",
    }).output();
    if (!copied.success) throw new Error(`cp ${entry}: ${new TextDecoder().decode(copied.stderr)}`);
  }
  try {
    await Deno.symlink(await Deno.realPath(join(CHECKOUT, "node_modules")), join(dir, "node_modules"));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  if (options.bundle) await buildBundle(join(dir, "bundle"));
  return join(dir, "scripts", "mewcode");
}

const shared = new Map<boolean, Promise<string>>();

/**
 * The installed package (with its bundle unless `bundle` is false) that every benchmark of this process
 * runs, made once (each bundle takes seconds to build) in a temporary folder removed when the process exits;
 * returns its launcher's path.
 */
export function sharedPackage(options: { bundle: boolean }): Promise<string> {
  let made = shared.get(options.bundle);
  if (made === undefined) {
    made = (async () => {
      const dir = await Deno.makeTempDir({ prefix: "mewcode-bench-package-" });
      globalThis.addEventListener("unload", () => {
        try {
          Deno.removeSync(dir, { recursive: true });
        } catch {
          // Gone already.
        }
      });
      return await installedPackage(dir, options);
    })();
    shared.set(options.bundle, made);
  }
  return made;
}

/**
 * Imports a module by a URL that Deno's module graph does not follow. Deno reads, parses and resolves
 * every statically written `import("./x.ts")` of a module when that module is loaded, with everything
 * those import in turn, whether or not the branch ever runs: mewcode's entry point would read every
 * command's modules for `--version`, and a session the other provider's modules for each run. A module
 * loaded this way is read when it is needed, and only then.
 *
 * ```ts
 * const { runDoctor } = await lazyImport<typeof import("./doctor.ts")>(new URL("./doctor.ts", import.meta.url));
 * ```
 *
 * `deno compile` does not see these imports either: scripts/compile.ts includes src/ as a whole. The bundle
 * (scripts/bundle.ts) rewrites each such URL into an `import()` the bundler follows, passed here as a
 * function, and hides the bundle's own imports of its chunks from Deno's graph in the same way.
 *
 * @module
 */

/**
 * Imports the module at `url` (built from the caller's `import.meta.url`); the bundle passes the module's
 * `import()` instead.
 */
export function lazyImport<Module>(url: URL | (() => Promise<Module>)): Promise<Module> {
  return typeof url === "function" ? url() : import(url.href);
}

/**
 * A loader of the module at `url` that imports it on its first call and gives every later call the same
 * promise: for code that must not load before it is needed (after a session's first request is on its way).
 */
export function lazyModule<Module>(url: URL | (() => Promise<Module>)): () => Promise<Module> {
  let loading: Promise<Module> | null = null;
  return () => loading ??= lazyImport<Module>(url);
}

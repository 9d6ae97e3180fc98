/**
 * Merges the chunks a one-shot run loads on its way to its first request into one file per step of the way
 * (scripts/bundle.ts runs it on the finished bundle).
 *
 * esbuild's code splitting puts the modules reached by the same set of entry points (main.js and each lazily
 * imported module) into a chunk of their own, so a run that goes through several entry points loads one file
 * per such set: 39 files before a one-shot run's first request, most of them under 2 kB. Deno pays each file
 * a load of its own (resolving, reading, a code-cache lookup, compiling, instantiating) whatever its size.
 *
 * For each step (an entry point the run imports in turn: main.js, then the workspace, the one-shot mode, the
 * Anthropic provider), the chunks its static imports reach that no earlier step reached are bundled again,
 * by esbuild without code splitting, into one file, `group-<step>.js`, which exports what the rest of the
 * bundle imports from them under names prefixed with each chunk's own. Every import of such a chunk, in any
 * file, then names the group instead, and the chunks are removed: each module still exists once (never
 * twice under two names: one instance, one class for `instanceof`), and a command that needs one chunk of a
 * group loads the whole group (its functions compile only when called). Chunks a worker entry reaches stay
 * as they are: a worker would load a whole group of the main program's code for one of them.
 *
 * @module
 */
import { join } from "node:path";

/** Why the bundle's files could not be grouped. */
export class BundleGroupError extends Error {
  override name = "BundleGroupError";
}

/** One static import in a bundled file: `import{a as b,c}from"./x.js"` or `import"./x.js"`. */
interface StaticImport {
  /** The imported file's name, in the bundle's folder. */
  file: string;
  /** Each imported binding (its exported name and its local one), or null for an import for effect only. */
  bindings: { imported: string; local: string }[] | null;
}

/**
 * A static import of a bundle file, at the start of a statement. esbuild writes every static import in one
 * of these two forms: at a file's head, or in a bundle without code splitting where the imported module's
 * code would have begun.
 */
const IMPORT_STATEMENT = /(^|[;}\n])import\s*(?:\{([^}]*)\}\s*from\s*)?"\.\/([^"/]+\.js)"/g;
const BINDING = /^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/;
/** A dynamic import of a bundle file, as scripts/bundle.ts leaves it (hidden from Deno's module graph). */
const DYNAMIC_IMPORT = /\bimport\(new URL\("\.\/([^"/]+\.js)",\s*import\.meta\.url\)\.href\)/g;

/**
 * Rewrites each static import of a bundle file in `text` with `rewrite` (which returns the import to write
 * instead) and returns the new text and the imports found. Any other form of static import of a bundle file
 * is refused: the grouping could not follow it.
 */
export function rewriteStaticImports(
  name: string,
  text: string,
  rewrite: (found: StaticImport) => StaticImport = (found) => found,
): { text: string; imports: StaticImport[] } {
  const imports: StaticImport[] = [];
  const rewritten = text.replace(IMPORT_STATEMENT, (_match, before: string, list?: string, file?: string) => {
    const bindings = list === undefined ? null : list.split(",").map((part) => part.trim())
      .filter((part) => part !== "").map((part) => {
        const binding = BINDING.exec(part);
        if (binding === null) throw new BundleGroupError(`${name}: cannot read the import binding "${part}"`);
        return { imported: binding[1]!, local: binding[2] ?? binding[1]! };
      });
    const found = { file: file!, bindings };
    imports.push(found);
    return before + renderImport(rewrite(found));
  });
  const stray = /(?:\bfrom\s*|\bimport\s*)"\.\/[^"]*"/.exec(rewritten.replace(IMPORT_STATEMENT, "$1"));
  if (stray !== null) {
    throw new BundleGroupError(`${name}: a static import the grouping cannot follow: ${stray[0]}`);
  }
  return { text: rewritten, imports };
}

function renderImport({ file, bindings }: StaticImport): string {
  return bindings === null
    ? `import"./${file}"`
    : `import{${bindings.map(({ imported, local }) => `${imported} as ${local}`).join(",")}}from"./${file}"`;
}

/** The name a group exports a chunk's binding under: the chunk's own name, then the binding's. */
function groupedName(chunk: string, imported: string): string {
  return `_${chunk.replace(/^chunk-/, "").replace(/\.js$/, "").replace(/[^\w$]/g, "_")}$${imported}`;
}

/** The result of grouping: each group's file and the chunks it replaced. */
export interface LoadGroup {
  step: string;
  file: string;
  chunks: string[];
}

/**
 * Groups the chunks of the bundle in `dir` along `steps` (see the module doc), in place. `steps` name entry
 * points by their source module's base name ("main", "print_mode"); `workers` are the worker entries' file
 * names, whose chunks stay.
 * Returns the groups written.
 */
export async function groupLoadPath(
  dir: string,
  options: { steps: readonly string[]; workers: readonly string[]; denoPath?: string },
): Promise<LoadGroup[]> {
  const names = new Set<string>();
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".js")) names.add(entry.name);
  }
  const texts = new Map<string, string>();
  const parsed = new Map<string, StaticImport[]>();
  const dynamic = new Map<string, string[]>();
  for (const name of names) {
    const text = await Deno.readTextFile(join(dir, name));
    texts.set(name, text);
    parsed.set(name, rewriteStaticImports(name, text).imports);
    dynamic.set(name, [...text.matchAll(DYNAMIC_IMPORT)].map((found) => found[1]!));
  }
  const staticImports = (name: string) => {
    const imports = parsed.get(name);
    if (imports === undefined) {
      throw new BundleGroupError(`the bundle imports ${name}, which it does not hold`);
    }
    return imports.map((found) => found.file);
  };
  // What the workers load, statically or not: never grouped.
  const workerFiles = new Set<string>();
  const pending = [...options.workers];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (workerFiles.has(name)) continue;
    workerFiles.add(name);
    pending.push(...staticImports(name), ...(dynamic.get(name) ?? []));
  }

  const reached = new Set<string>();
  const groups: LoadGroup[] = [];
  const groupOf = new Map<string, string>();
  for (const step of options.steps) {
    const entry = stepEntry(names, step);
    // The chunks in the order a load evaluates them (each after what it imports).
    const order: string[] = [];
    const visit = (name: string, seen: Set<string>) => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const imported of staticImports(name)) visit(imported, seen);
      order.push(name);
    };
    visit(entry, new Set());
    const chunks = order.filter((name) =>
      name.startsWith("chunk-") && !reached.has(name) && !workerFiles.has(name)
    );
    for (const name of order) reached.add(name);
    if (chunks.length < 2) continue;
    const file = `group-${step}.js`;
    if (names.has(file)) throw new BundleGroupError(`the bundle already holds a file named ${file}`);
    for (const chunk of chunks) groupOf.set(chunk, file);
    groups.push({ step, file, chunks });
  }
  if (groups.length === 0) return groups;

  // What the rest of the bundle imports from each grouped chunk: the group exports exactly that. A chunk of
  // a later group counts as a user: it is bundled with its own group, which then imports from this one.
  const used = new Map<string, Set<string>>();
  for (const [name, imports] of parsed) {
    for (const found of imports) {
      const group = groupOf.get(found.file);
      if (group === undefined || group === groupOf.get(name)) continue;
      const bindings = used.get(found.file) ?? new Set();
      for (const binding of found.bindings ?? []) bindings.add(binding.imported);
      used.set(found.file, bindings);
    }
  }
  for (const group of groups) {
    await bundleGroup(dir, group, { used, parsed, denoPath: options.denoPath ?? Deno.execPath() });
  }
  for (const group of groups) texts.set(group.file, await Deno.readTextFile(join(dir, group.file)));
  // Every file but the grouped chunks (the groups included) now imports from the groups.
  for (const [name, before] of texts) {
    if (groupOf.has(name)) continue;
    const { text } = rewriteStaticImports(name, before, (found) => {
      const group = groupOf.get(found.file);
      if (group === undefined) return found;
      return {
        file: group,
        bindings: found.bindings?.map(({ imported, local }) => ({
          imported: groupedName(found.file, imported),
          local,
        })) ?? null,
      };
    });
    // Nothing may name a removed chunk any more, in any form.
    for (const chunk of groupOf.keys()) {
      if (text.includes(`./${chunk}`)) {
        throw new BundleGroupError(
          `${name} still names ${chunk}, which was merged into ${groupOf.get(chunk)}`,
        );
      }
    }
    if (text !== before) await Deno.writeTextFile(join(dir, name), text);
  }
  for (const chunk of groupOf.keys()) await Deno.remove(join(dir, chunk));
  return groups;
}

/** The bundle file of a step: main.js for "main", else the one `<step>-<hash>.js`. */
export function stepEntry(names: ReadonlySet<string>, step: string): string {
  if (names.has(`${step}.js`)) return `${step}.js`;
  const pattern = new RegExp(`^${step.replace(/[^\w]/g, "\\$&")}-[A-Z0-9]+\\.js$`);
  const found = [...names].filter((name) => pattern.test(name));
  if (found.length !== 1) {
    throw new BundleGroupError(
      `the load path's step "${step}" names ${found.length === 0 ? "no" : "more than one"} bundle file` +
        (found.length === 0 ? "" : ` (${found.join(", ")})`),
    );
  }
  return found[0]!;
}

/** Writes one group: esbuild bundles its chunks (each other file external) into `group.file`. */
async function bundleGroup(
  dir: string,
  group: LoadGroup,
  { used, parsed, denoPath }: {
    used: ReadonlyMap<string, ReadonlySet<string>>;
    parsed: ReadonlyMap<string, readonly StaticImport[]>;
    denoPath: string;
  },
): Promise<void> {
  const entry = join(dir, `.${group.file}.entry.js`);
  const external = new Set<string>();
  const grouped = new Set(group.chunks);
  let text = "";
  for (const chunk of group.chunks) {
    const bindings = [...(used.get(chunk) ?? [])];
    text += bindings.length === 0
      ? `import"./${chunk}";\n`
      : `export{${
        bindings.map((binding) => `${binding} as ${groupedName(chunk, binding)}`).join(",")
      }}from"./${chunk}";\n`;
  }
  await Deno.writeTextFile(entry, text);
  const written = join(dir, `.${group.file}.group.js`);
  try {
    for (const chunk of group.chunks) {
      for (const found of parsed.get(chunk)!) if (!grouped.has(found.file)) external.add(found.file);
    }
    // Names and whitespace are minified again, as in the first pass (SPLIT_BUNDLE_FLAGS).
    const output = await new Deno.Command(denoPath, {
      args: [
        "bundle",
        "--quiet",
        "--no-config",
        "--platform",
        "deno",
        "--format",
        "esm",
        "--minify",
        ...[...external].flatMap((name) => ["--external", `./${name}`]),
        "--output",
        written,
        entry,
      ],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
      env: { DENO_NO_UPDATE_CHECK: "1" },
    }).output();
    if (!output.success) {
      throw new BundleGroupError(
        `deno bundle of ${group.file} failed (exit ${output.code}): ${
          new TextDecoder().decode(output.stderr).trim()
        }`,
      );
    }
    await Deno.rename(written, join(dir, group.file));
  } finally {
    await Deno.remove(entry).catch(() => {});
    await Deno.remove(written).catch(() => {});
  }
}

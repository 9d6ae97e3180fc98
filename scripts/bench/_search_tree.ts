/**
 * The search benchmark's tree (search.ts): at least 20,000 searchable files and 200 MB of source-like text in
 * several languages, plus node_modules, .gitignore'd directories (nested .gitignore files too) and binary
 * files, generated once from a seeded PRNG and cached under the work directory.
 *
 * @module
 */
import { join } from "node:path";
import { BENCH_LITERAL } from "./_search_session.ts";

/** Sizes of a generated tree. */
interface TreeShape {
  /** Label used in the cache directory name. */
  name: string;
  packages: number;
  modulesPerPackage: number;
  filesPerModule: number;
  /** Files under node_modules (ignored by both sides). */
  nodeModulesFiles: number;
}

const FULL_SHAPE: TreeShape = {
  name: "full",
  packages: 40,
  modulesPerPackage: 25,
  filesPerModule: 20,
  nodeModulesFiles: 3000,
};
const QUICK_SHAPE: TreeShape = {
  name: "quick",
  packages: 2,
  modulesPerPackage: 5,
  filesPerModule: 20,
  nodeModulesFiles: 100,
};
const TREE_VERSION = 1;

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "user account order item cart price total config option value state event handler request response " +
  "client server cache store query result error status token session file path buffer stream reader " +
  "writer parser lexer node tree graph edge vertex index key map list set queue stack batch job task " +
  "worker pool thread lock timer clock date time zone locale message channel socket packet frame " +
  "header body payload schema model view controller router route param input output format render " +
  "update create delete remove insert select filter reduce merge split join sort search match scan"
).split(" ");

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function identifier(random: Random): string {
  const parts = 1 + Math.floor(random() * 3);
  let name = pick(random, WORDS);
  for (let index = 1; index < parts; index++) name += capitalize(pick(random, WORDS));
  return name;
}

function snake(random: Random): string {
  const parts = 1 + Math.floor(random() * 3);
  const words: string[] = [];
  for (let index = 0; index < parts; index++) words.push(pick(random, WORDS));
  return words.join("_");
}

type Language = "ts" | "py" | "go" | "rs" | "md" | "json";

function codeLine(language: Language, random: Random): string {
  const indent = "  ".repeat(Math.floor(random() * 4));
  const a = identifier(random);
  const b = identifier(random);
  const roll = random();
  switch (language) {
    case "ts":
      if (roll < 0.01) {
        return `${indent}export async function handle${capitalize(a)}Event(event: ${capitalize(b)}) {`;
      }
      if (roll < 0.02) return `${indent}function handle${capitalize(a)}(input: ${capitalize(b)}): void {`;
      if (roll < 0.12) {
        return `${indent}const ${a} = await ${b}.${identifier(random)}(${identifier(random)});`;
      }
      if (roll < 0.2) {
        return `${indent}// ${a} ${b} ${pick(random, WORDS)} ${pick(random, WORDS)} when needed`;
      }
      if (roll < 0.28) return `${indent}if (${a}.${b} === ${Math.floor(random() * 1000)}) return ${b};`;
      if (roll < 0.34) {
        return `import { ${a}, ${b} } from "./${pick(random, WORDS)}_${pick(random, WORDS)}.ts";`;
      }
      if (roll < 0.4) return "";
      if (roll < 0.46) return `${indent}}`;
      return `${indent}${a}.${b}(${identifier(random)}, "${pick(random, WORDS)} ${pick(random, WORDS)}");`;
    case "py":
      if (roll < 0.02) return `${indent}def handle_${snake(random)}_event(self, ${snake(random)}):`;
      if (roll < 0.15) return `${indent}${snake(random)} = self.${snake(random)}(${snake(random)})`;
      if (roll < 0.25) return `${indent}# ${a} ${b} ${pick(random, WORDS)}`;
      if (roll < 0.3) return "";
      return `${indent}if ${snake(random)} is not None: return ${snake(random)}`;
    case "go":
      if (roll < 0.02) {
        return `func handle${capitalize(a)}Event(ctx context.Context, ${a} *${capitalize(b)}) error {`;
      }
      if (roll < 0.15) return `\t${a} := ${b}.${capitalize(identifier(random))}(${identifier(random)})`;
      if (roll < 0.25) return `\tif err != nil { return fmt.Errorf("${pick(random, WORDS)} ${a}: %w", err) }`;
      if (roll < 0.3) return "";
      return `\t// ${a} ${b} ${pick(random, WORDS)}`;
    case "rs":
      if (roll < 0.02) {
        return `pub fn handle_${snake(random)}_event(${snake(random)}: &${capitalize(a)}) -> Result<()> {`;
      }
      if (roll < 0.15) return `    let ${snake(random)} = ${snake(random)}.${snake(random)}()?;`;
      if (roll < 0.3) return "";
      return `    // ${a} ${b} ${pick(random, WORDS)}`;
    case "md":
      if (roll < 0.05) return `## ${capitalize(pick(random, WORDS))} ${pick(random, WORDS)}`;
      if (roll < 0.2) return "";
      return `The ${pick(random, WORDS)} ${pick(random, WORDS)} uses \`${a}\` to ${
        pick(random, WORDS)
      } the ${b}.`;
    case "json":
      return `  "${a}": { "${b}": ${Math.floor(random() * 100000)}, "${identifier(random)}": "${
        pick(random, WORDS)
      }" },`;
  }
}

const EXTENSIONS: readonly [string, Language][] = [
  ["ts", "ts"],
  ["ts", "ts"],
  ["ts", "ts"],
  ["ts", "ts"],
  ["tsx", "ts"],
  ["tsx", "ts"],
  ["js", "ts"],
  ["js", "ts"],
  ["py", "py"],
  ["py", "py"],
  ["go", "go"],
  ["go", "go"],
  ["rs", "rs"],
  ["md", "md"],
  ["json", "json"],
];

/** A pool of lines per language; files are built from it, which keeps generation fast. */
function linePools(random: Random): Record<Language, string[]> {
  const pools = {} as Record<Language, string[]>;
  for (const language of ["ts", "py", "go", "rs", "md", "json"] as const) {
    const lines: string[] = [];
    for (let index = 0; index < 40_000; index++) lines.push(codeLine(language, random));
    pools[language] = lines;
  }
  return pools;
}

function fileText(random: Random, lines: readonly string[], targetBytes: number): string {
  const parts: string[] = [];
  let size = 0;
  while (size < targetBytes) {
    let line = pick(random, lines);
    if (random() < 1 / 2500) line = `  const merged = ${BENCH_LITERAL}(defaults, ${identifier(random)});`;
    parts.push(line);
    size += line.length + 1;
  }
  return parts.join("\n") + "\n";
}

/** Generates the tree under `directory` (which must not exist yet). */
async function generateTree(directory: string, shape: TreeShape): Promise<void> {
  const random = mulberry32(0x6d657763);
  const pools = linePools(random);
  const encoder = new TextEncoder();
  await Deno.mkdir(directory, { recursive: true });
  await Deno.writeTextFile(join(directory, ".gitignore"), "node_modules/\ndist/\n*.log\n/tmp/\n");
  await Deno.mkdir(join(directory, ".github", "workflows"), { recursive: true });
  for (let index = 0; index < 5; index++) {
    await Deno.writeTextFile(
      join(directory, ".github", "workflows", `ci${index}.yml`),
      `name: ci${index}\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n`,
    );
  }
  const writes: Promise<void>[] = [];
  const flush = async () => {
    await Promise.all(writes);
    writes.length = 0;
  };
  const write = async (path: string, text: string | Uint8Array) => {
    writes.push(
      typeof text === "string" ? Deno.writeTextFile(path, text) : Deno.writeFile(path, text),
    );
    if (writes.length >= 64) await flush();
  };
  for (let packageIndex = 0; packageIndex < shape.packages; packageIndex++) {
    const packageDirectory = join(directory, "packages", `pkg${String(packageIndex).padStart(2, "0")}`);
    await Deno.mkdir(join(packageDirectory, "generated"), { recursive: true });
    await Deno.mkdir(join(packageDirectory, "dist"), { recursive: true });
    // A nested .gitignore: both sides must apply it.
    await write(join(packageDirectory, ".gitignore"), "generated/\n*.snap\n");
    for (let index = 0; index < 10; index++) {
      const lines = pools.ts;
      await write(join(packageDirectory, "generated", `gen${index}.ts`), fileText(random, lines, 8000));
      await write(join(packageDirectory, "dist", `bundle${index}.js`), fileText(random, lines, 8000));
      await write(join(packageDirectory, `case${index}.snap`), fileText(random, lines, 2000));
    }
    await write(join(packageDirectory, "build.log"), fileText(random, pools.md, 4000));
    const binary = new Uint8Array(4096);
    for (let index = 0; index < binary.length; index++) binary[index] = Math.floor(random() * 256);
    binary.set(encoder.encode(BENCH_LITERAL), 100);
    binary[10] = 0;
    await write(join(packageDirectory, "blob.dat"), binary);
    for (let moduleIndex = 0; moduleIndex < shape.modulesPerPackage; moduleIndex++) {
      const moduleDirectory = join(packageDirectory, "src", `mod${String(moduleIndex).padStart(2, "0")}`);
      await Deno.mkdir(join(moduleDirectory, "internal"), { recursive: true });
      for (let fileIndex = 0; fileIndex < shape.filesPerModule; fileIndex++) {
        const [extension, language] = pick(random, EXTENSIONS);
        const subdirectory = fileIndex % 5 === 4 ? join(moduleDirectory, "internal") : moduleDirectory;
        // Sizes from ~1 KB to ~20 KB, mean ~10.6 KB.
        const size = 1000 + Math.floor(random() * random() * 40_000) + Math.floor(random() * 1500);
        await write(
          join(subdirectory, `${identifier(random)}_${fileIndex}.${extension}`),
          fileText(random, pools[language], size),
        );
      }
    }
  }
  const nodeModules = join(directory, "node_modules");
  for (let index = 0; index < shape.nodeModulesFiles; index++) {
    const packageDirectory = join(nodeModules, `dep${Math.floor(index / 30)}`, "lib");
    if (index % 30 === 0) await Deno.mkdir(packageDirectory, { recursive: true });
    await write(join(packageDirectory, `file${index}.js`), fileText(random, pools.ts, 6000));
  }
  await flush();
}

/** Returns the cached tree for `quick` under `workDir`, generating it on first use. */
export async function ensureSearchTree(
  workDir: string,
  quick: boolean,
): Promise<{ directory: string; changed: boolean }> {
  const shape = quick ? QUICK_SHAPE : FULL_SHAPE;
  const directory = join(workDir, `search-tree-v${TREE_VERSION}-${shape.name}`);
  const marker = `${directory}.complete`;
  let complete = true;
  try {
    await Deno.stat(marker);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    complete = false;
  }
  if (!complete) {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
    await generateTree(directory, shape);
  }
  // A git repository, as a project is: a one-shot session walks a workspace ahead only in one whose index
  // shows it large (see `WALK_AHEAD_MIN_INDEX_BYTES`). The files are added with --intent-to-add: the index
  // lists them, and no object is written.
  const indexed = await Deno.stat(join(directory, ".git", "index")).then(() => true, () => false);
  if (!indexed) {
    for (const args of [["init", "-q"], ["add", "--intent-to-add", "--all"]]) {
      const { success, stderr } = await new Deno.Command("git", { args, cwd: directory, stderr: "piped" })
        .output();
      if (!success) throw new Error(`git ${args.join(" ")} failed: ${new TextDecoder().decode(stderr)}`);
    }
  }
  if (!complete) await Deno.writeTextFile(marker, new Date().toISOString());
  return { directory, changed: !complete || !indexed };
}

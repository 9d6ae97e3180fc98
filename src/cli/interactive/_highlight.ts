/**
 * Syntax highlighting of the interactive session's code blocks with highlight.js: its ES module core and
 * one grammar module per language, each loaded in the background the first time a fence names it (or ahead
 * of time with `loadHighlighting`), so start-up pays for none of them. highlight.js gives HTML with scope
 * classes; they become our terminal styles here.
 *
 * @module
 */
import type { Span, StyleName } from "./style.ts";

/** The part of highlight.js's core this module uses (its ESM build ships no types: checked when loaded). */
interface HighlightCore {
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
  registerLanguage(name: string, grammar: unknown): void;
}

type GrammarModule = Promise<{ default: unknown }>;

// Literal specifiers, so that `deno compile` and the lock file know every grammar.
const GRAMMARS: ReadonlyMap<string, () => GrammarModule> = new Map([
  ["bash", () => import("@highlightjs/cdn-assets/es/languages/bash.min.js")],
  ["c", () => import("@highlightjs/cdn-assets/es/languages/c.min.js")],
  ["cpp", () => import("@highlightjs/cdn-assets/es/languages/cpp.min.js")],
  ["csharp", () => import("@highlightjs/cdn-assets/es/languages/csharp.min.js")],
  ["css", () => import("@highlightjs/cdn-assets/es/languages/css.min.js")],
  ["diff", () => import("@highlightjs/cdn-assets/es/languages/diff.min.js")],
  ["dockerfile", () => import("@highlightjs/cdn-assets/es/languages/dockerfile.min.js")],
  ["go", () => import("@highlightjs/cdn-assets/es/languages/go.min.js")],
  ["ini", () => import("@highlightjs/cdn-assets/es/languages/ini.min.js")],
  ["java", () => import("@highlightjs/cdn-assets/es/languages/java.min.js")],
  ["javascript", () => import("@highlightjs/cdn-assets/es/languages/javascript.min.js")],
  ["json", () => import("@highlightjs/cdn-assets/es/languages/json.min.js")],
  ["kotlin", () => import("@highlightjs/cdn-assets/es/languages/kotlin.min.js")],
  ["lua", () => import("@highlightjs/cdn-assets/es/languages/lua.min.js")],
  ["makefile", () => import("@highlightjs/cdn-assets/es/languages/makefile.min.js")],
  ["markdown", () => import("@highlightjs/cdn-assets/es/languages/markdown.min.js")],
  ["php", () => import("@highlightjs/cdn-assets/es/languages/php.min.js")],
  ["python", () => import("@highlightjs/cdn-assets/es/languages/python.min.js")],
  ["ruby", () => import("@highlightjs/cdn-assets/es/languages/ruby.min.js")],
  ["rust", () => import("@highlightjs/cdn-assets/es/languages/rust.min.js")],
  ["scss", () => import("@highlightjs/cdn-assets/es/languages/scss.min.js")],
  ["shell", () => import("@highlightjs/cdn-assets/es/languages/shell.min.js")],
  ["sql", () => import("@highlightjs/cdn-assets/es/languages/sql.min.js")],
  ["swift", () => import("@highlightjs/cdn-assets/es/languages/swift.min.js")],
  ["typescript", () => import("@highlightjs/cdn-assets/es/languages/typescript.min.js")],
  ["xml", () => import("@highlightjs/cdn-assets/es/languages/xml.min.js")],
  ["yaml", () => import("@highlightjs/cdn-assets/es/languages/yaml.min.js")],
]);

const ALIASES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    sh: "bash",
    zsh: "bash",
    console: "shell",
    shellsession: "shell",
    "c++": "cpp",
    cc: "cpp",
    cxx: "cpp",
    hpp: "cpp",
    h: "c",
    cs: "csharp",
    "c#": "csharp",
    patch: "diff",
    docker: "dockerfile",
    golang: "go",
    toml: "ini",
    js: "javascript",
    jsx: "javascript",
    mjs: "javascript",
    cjs: "javascript",
    jsonc: "json",
    json5: "json",
    kt: "kotlin",
    kts: "kotlin",
    make: "makefile",
    mk: "makefile",
    md: "markdown",
    py: "python",
    python3: "python",
    rb: "ruby",
    rs: "rust",
    ts: "typescript",
    tsx: "typescript",
    mts: "typescript",
    cts: "typescript",
    html: "xml",
    htm: "xml",
    svg: "xml",
    yml: "yaml",
  }),
);

let core: Promise<HighlightCore | null> | null = null;
let loadedCore: HighlightCore | null = null;
const grammars = new Map<string, Promise<void>>();
const ready = new Set<string>();

/** The grammar a fence's info string names ("ts title=a.ts" → "typescript"), or null for none we have. */
function grammarName(info: string | undefined): string | null {
  const word = (info ?? "").trim().split(/\s+/, 1)[0]!.toLowerCase().replace(/^\{?\.?|\}$/g, "");
  const name = ALIASES.get(word) ?? word;
  return GRAMMARS.has(name) ? name : null;
}

/**
 * Loads the highlighter and the grammars of `languages` (fence names or aliases; default every grammar
 * it has). Code blocks printed before their grammar is loaded are plain. Never rejects.
 */
export async function loadHighlighting(languages?: readonly string[]): Promise<void> {
  const names = languages === undefined ? [...GRAMMARS.keys()] : languages.map(grammarName);
  await Promise.all(names.map((name) => name === null ? undefined : loadGrammar(name)));
}

/** Starts loading a code block's grammar in the background (highlighting only matters with colours). */
export function requestGrammar(info: string | undefined, colors: boolean): void {
  const name = colors ? grammarName(info) : null;
  if (name !== null) void loadGrammar(name);
}

function loadGrammar(name: string): Promise<void> {
  const known = grammars.get(name);
  if (known !== undefined) return known;
  const loading = Promise.all([loadCore(), GRAMMARS.get(name)!()]).then(([highlighter, module]) => {
    if (highlighter === null || typeof module.default !== "function") return;
    highlighter.registerLanguage(name, module.default);
    ready.add(name);
  }).catch(() => {}); // a grammar that cannot load leaves its code plain
  grammars.set(name, loading);
  return loading;
}

function loadCore(): Promise<HighlightCore | null> {
  core ??= import("@highlightjs/cdn-assets/es/core.min.js").then((module: { default: unknown }) => {
    const instance = newInstance(module.default);
    loadedCore = instance;
    return instance;
  }, () => null);
  return core;
}

function newInstance(value: unknown): HighlightCore | null {
  if (!isHighlightCore(value)) return null;
  // A private instance: the module's shared one belongs to whoever else imports highlight.js.
  const create: unknown = (value as { newInstance?: unknown }).newInstance;
  const instance: unknown = typeof create === "function" ? create() : value;
  return isHighlightCore(instance) ? instance : null;
}

function isHighlightCore(value: unknown): value is HighlightCore {
  if (typeof value !== "object" && typeof value !== "function") return false;
  if (value === null) return false;
  const candidate = value as Partial<Record<keyof HighlightCore, unknown>>;
  return typeof candidate.highlight === "function" && typeof candidate.registerLanguage === "function";
}

/** Longer code is shown plain: highlighting it could stall the session. */
const MAX_HIGHLIGHT_CHARS = 50_000;

/** Code as lines of styled spans, or null when its grammar is not loaded (yet). */
export function highlightLines(code: string, info: string | undefined): Span[][] | null {
  const name = grammarName(info);
  if (name === null || loadedCore === null || !ready.has(name) || code.length > MAX_HIGHLIGHT_CHARS) {
    return null;
  }
  let html: string;
  try {
    html = loadedCore.highlight(code, { language: name, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
  // highlight.js escapes the code's own "<" and "&", so every tag here is one of its spans.
  const lines: Span[][] = [[]];
  const stack: (readonly StyleName[] | null)[] = [];
  for (const match of html.matchAll(/<span class="([^"]*)">|<\/span>|([^<]+)/g)) {
    if (match[1] !== undefined) {
      stack.push(scopeStyles(match[1]));
      continue;
    }
    if (match[2] === undefined) {
      stack.pop();
      continue;
    }
    const styles = stack.findLast((entry) => entry !== null) ?? [];
    unescapeHtml(match[2]).split("\n").forEach((piece, index) => {
      if (index > 0) lines.push([]);
      if (piece !== "") lines[lines.length - 1]!.push({ text: piece, styles });
    });
  }
  return lines;
}

/** The colours of a highlight.js scope ("hljs-title function_"); null inherits the enclosing scope's. */
function scopeStyles(classes: string): readonly StyleName[] | null {
  const [scope = "", modifier] = classes.replace(/^hljs-/, "").split(" ");
  if (scope === "title") return modifier === "class_" ? ["cyan"] : ["blue"];
  return SCOPES.get(scope) ?? null;
}

const SCOPES: ReadonlyMap<string, readonly StyleName[]> = new Map<string, readonly StyleName[]>([
  ["keyword", ["magenta"]],
  ["selector-tag", ["magenta"]],
  ["doctag", ["magenta"]],
  ["built_in", ["cyan"]],
  ["type", ["cyan"]],
  ["attr", ["cyan"]],
  ["attribute", ["cyan"]],
  ["property", ["cyan"]],
  ["bullet", ["cyan"]],
  ["code", ["cyan"]],
  ["string", ["green"]],
  ["char", ["green"]],
  ["addition", ["green"]],
  ["regexp", ["red"]],
  ["deletion", ["red"]],
  ["number", ["yellow"]],
  ["literal", ["yellow"]],
  ["symbol", ["yellow"]],
  ["comment", ["gray", "italic"]],
  ["quote", ["gray"]],
  ["meta", ["gray"]],
  ["name", ["blue"]],
  ["section", ["bold", "blue"]],
  ["emphasis", ["italic"]],
  ["strong", ["bold"]],
  ["link", ["underline"]],
  ["subst", []],
]);

function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#x27|#39);/g, (_, name: string) => HTML_ESCAPES.get(name) ?? "");
}

const HTML_ESCAPES: ReadonlyMap<string, string> = new Map([
  ["amp", "&"],
  ["lt", "<"],
  ["gt", ">"],
  ["quot", '"'],
  ["#x27", "'"],
  ["#39", "'"],
]);

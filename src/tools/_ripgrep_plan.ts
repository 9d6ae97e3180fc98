/**
 * What a Grep call asks of ripgrep (`planRipgrep`): the arguments that make ripgrep walk as Grep's walk does
 * (the same ignore files, exclusions and glob) and report every line that matches, with the lines holding a
 * NUL byte, which tell binary files apart; or null for a call ripgrep cannot answer as Grep would.
 *
 * @module
 */
import { compileGlob } from "../common/glob.ts";
import { MAX_GREP_FILE_BYTES } from "./_grep_collector.ts";
import { compileGrepMatcher, type GrepMatcher } from "./_grep_matcher.ts";
import { BINARY_TYPE, binaryTypeArguments, globTypeArguments, ripgrepGlob } from "./_ripgrep_glob.ts";
import { type RipgrepPattern, ripgrepPattern } from "./_ripgrep_pattern.ts";
import { DEFAULT_HEAD_LIMIT, EXCLUDED_DIRECTORY_NAMES } from "./_shared.ts";
import type { GrepInput } from "./grep.ts";
import type { ToolCallContext } from "./tool.ts";

/** What a call asks of ripgrep. */
export interface RipgrepPlan {
  pattern: RipgrepPattern;
  matcher: GrepMatcher;
  mode: NonNullable<GrepInput["output_mode"]>;
  context: number;
  limit: number;
  /** ripgrep's type globs for the glob, or null without a glob. */
  prefilter: string[] | null;
  /** Whether ripgrep skips files larger than `MAX_GREP_FILE_BYTES` itself (`--max-filesize`). */
  limitFileSize: boolean;
  /**
   * Without `limitFileSize`: searched files adding up to this many bytes could hold a file over the limit
   * (at most `MAX_GREP_FILE_BYTES`; tests lower it).
   */
  largeTreeBytes: number;
  /** ripgrep's arguments for the search (see `ripgrepScript`). */
  search: string[];
}

/** The ripgrep arguments of a call, or null when ripgrep cannot give its results. */
export function planRipgrep(
  input: GrepInput,
  context: Pick<ToolCallContext, "strictLinks">,
  options: { limitFileSize?: boolean; largeTreeBytes?: number } = {},
): RipgrepPlan | null {
  // ripgrep cannot refuse files with several hard links.
  if (context.strictLinks) return null;
  const caseInsensitive = input.case_insensitive ?? false;
  const matcher = compileGrepMatcher(input.pattern, caseInsensitive);
  const pattern = ripgrepPattern(input.pattern, caseInsensitive);
  if (!matcher.ok || pattern === null) return null;
  let prefilter: string[] | null = null;
  if (input.glob !== undefined) {
    if (!compileGlob(input.glob, { basename: true }).ok) return null;
    prefilter = ripgrepGlob(input.glob);
    if (prefilter === null) return null;
  }
  const mode = input.output_mode ?? "content";
  const contextLines = mode === "content" ? input.context ?? 0 : 0;
  const limitFileSize = options.limitFileSize ?? false;
  const walk = [
    "--no-config",
    // Ignore files: .gitignore in every directory, whether or not git is there, and nothing else.
    "--no-ignore-global",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-require-git",
    "--hidden",
    // Costs a stat of every file: only where the files searched add up to the limit (see `#largeTrees`).
    ...(limitFileSize ? ["--max-filesize", String(MAX_GREP_FILE_BYTES)] : []),
    ...[...EXCLUDED_DIRECTORY_NAMES].flatMap((name) => ["--glob", `!${name}/`]),
    ...binaryTypeArguments(),
    "--type-not",
    BINARY_TYPE,
    ...(prefilter === null ? [] : globTypeArguments(prefilter)),
  ];
  const search = [
    ...walk,
    "--stats",
    // Every file as text, with the lines that hold a NUL byte too: they tell binary files apart in one pass.
    "--text",
    "--null",
    "--with-filename",
    "--line-number",
    "--byte-offset",
    "--no-heading",
    "--color",
    "never",
    ...(contextLines > 0 ? ["--context", String(contextLines)] : []),
    ...pattern.args,
    "--regexp",
    "\\x00",
  ];
  return {
    pattern,
    matcher,
    mode,
    context: contextLines,
    limit: input.head_limit ?? DEFAULT_HEAD_LIMIT,
    prefilter,
    limitFileSize,
    largeTreeBytes: Math.min(options.largeTreeBytes ?? MAX_GREP_FILE_BYTES, MAX_GREP_FILE_BYTES),
    search,
  };
}

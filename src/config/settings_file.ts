/**
 * Reads one settings file: never follows a symbolic link out of the workspace (real-path check), refuses
 * anything but a regular file of bounded size, and turns every problem (unreadable, not UTF-8, malformed
 * JSON, an unknown key, a bad value) into a warning that names the file and the line, never a throw.
 *
 * @module
 */
import { readBoundedFile } from "./_bounded_read.ts";
import { type JsonPathPart, scanJson } from "./_json_scan.ts";
import { type SettingsFile, SettingsFileSchema } from "./settings_schema.ts";

/** The largest settings file read, in bytes. */
export const MAX_SETTINGS_BYTES = 1024 * 1024;
/** The most problems one warning lists. */
const MAX_LISTED_ISSUES = 5;

/** A problem with a settings file: the file is ignored as a whole. */
export interface SettingsWarning {
  /** The file, as mewcode looked for it. */
  path: string;
  /** The 1-based line of the first problem, when it has one. */
  line: number | null;
  /** What is wrong, with the line: `line 3: unknown key "permissions.allw"`. */
  problem: string;
  /** One line for stderr, naming the file and the line. */
  message: string;
}

/** What reading a settings file gave; `bytes` are exactly the bytes read (for the trust fingerprint). */
export type SettingsFileRead =
  | { status: "missing"; path: string }
  | { status: "ignored"; path: string; warning: SettingsWarning; bytes: Uint8Array | null }
  | { status: "loaded"; path: string; settings: SettingsFile; bytes: Uint8Array };

/**
 * Reads and validates the settings file at `path`. With `within` (a real directory path), a file whose
 * real path lies outside it is not read.
 */
export async function readSettingsFile(
  path: string,
  options: { within: string | null },
): Promise<SettingsFileRead> {
  const read = await readBoundedFile(path, { within: options.within, maxBytes: MAX_SETTINGS_BYTES });
  if (read.status === "missing") return { status: "missing", path };
  if (read.status === "refused") {
    return { status: "ignored", path, bytes: null, warning: warning(path, null, read.reason) };
  }
  const parsed = parseSettingsBytes(read.bytes, path);
  if (!parsed.ok) return { status: "ignored", path, bytes: read.bytes, warning: parsed.warning };
  return { status: "loaded", path, settings: parsed.settings, bytes: read.bytes };
}

/** Parses and validates settings file content; `path` only names the file in the warning. */
export function parseSettingsBytes(
  bytes: Uint8Array,
  path: string,
): { ok: true; settings: SettingsFile } | { ok: false; warning: SettingsWarning } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, warning: warning(path, null, "the file is not UTF-8 text") };
  }
  // Editors on Windows may start the file with a byte order mark, which JSON.parse refuses.
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  const scan = scanJson(text);
  if (!scan.ok) {
    return {
      ok: false,
      warning: warning(path, scan.line, `line ${scan.line}, column ${scan.column}: ${scan.message}`),
    };
  }
  const result = SettingsFileSchema.safeParse(JSON.parse(text));
  if (result.success) return { ok: true, settings: result.data };
  const problems: { line: number | null; text: string }[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path.filter((part): part is JsonPathPart => typeof part !== "symbol");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        problems.push({
          line: scan.lines.lineOf([...path, key]),
          text: `unknown key "${dotted([...path, key])}"`,
        });
      }
      continue;
    }
    problems.push({
      line: scan.lines.lineOf(path) ?? 1,
      text: path.length === 0 ? issue.message : `"${dotted(path)}": ${issue.message}`,
    });
  }
  problems.sort((left, right) => (left.line ?? 0) - (right.line ?? 0));
  const listed = problems.slice(0, MAX_LISTED_ISSUES).map((problem) =>
    problem.line === null ? problem.text : `line ${problem.line}: ${problem.text}`
  );
  if (problems.length > MAX_LISTED_ISSUES) listed.push(`${problems.length - MAX_LISTED_ISSUES} more`);
  return { ok: false, warning: warning(path, problems[0]?.line ?? null, listed.join("; ")) };
}

function dotted(path: readonly JsonPathPart[]): string {
  return path.map((part, index) => typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`)
    .join("");
}

function warning(path: string, line: number | null, problem: string): SettingsWarning {
  return { path, line, problem, message: `Ignoring settings file "${path}": ${problem}: fix or remove it` };
}

/**
 * What a tool call works on, for people: the input field that names it (ReadFile's path, Bash's command),
 * shown by the status line and in warnings such as "EditFile src/a.ts was not allowed".
 *
 * @module
 */
import type { Keep } from "./_terminal_text.ts";

/** A call's key argument, and which end of it to keep when it must be cut. */
export interface CallArgument {
  text: string;
  keep: Keep;
}

interface KeyArgument {
  field: string;
  keep: Keep;
  firstLine?: boolean;
}

// A Map, not an object: a tool name from the model such as "constructor" must not find a prototype member.
const KEY_ARGUMENTS: ReadonlyMap<string, KeyArgument> = new Map([
  ["ReadFile", { field: "path", keep: "end" }],
  ["WriteFile", { field: "path", keep: "end" }],
  ["EditFile", { field: "path", keep: "end" }],
  ["Bash", { field: "command", keep: "start", firstLine: true }],
  ["Glob", { field: "pattern", keep: "start" }],
  ["Grep", { field: "pattern", keep: "start" }],
]);

/** The key argument of a call, or null for an unknown tool or a missing field. Not yet sanitized. */
export function callArgument(name: string, input: unknown): CallArgument | null {
  const key = KEY_ARGUMENTS.get(name);
  if (key === undefined || typeof input !== "object" || input === null) return null;
  const value: unknown = (input as Record<string, unknown>)[key.field];
  if (typeof value !== "string" || value === "") return null;
  return { text: key.firstLine === true ? firstLine(value) : value, keep: key.keep };
}

/** The first non-blank line of a command, with "…" when more lines follow. */
function firstLine(text: string): string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  const first = lines[0]?.trim() ?? "";
  return lines.length > 1 ? `${first} …` : first;
}

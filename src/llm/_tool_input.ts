/**
 * The parsing of a tool call's input as a model streamed it, shared by the providers' assemblers.
 *
 * @module
 */
import { checkJsonBounds } from "../common/json_bounds.ts";

/** Parses a tool input buffer: an empty buffer is `{}`; anything but a JSON object is an error. */
export function parseToolInput(
  json: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (json.trim() === "") return { ok: true, value: {} };
  // Bounded before parsing: a deeply nested value would overflow the stack of every recursive consumer
  // (serialisation, structured cloning into a worker, validation) and crash the run.
  const bounds = checkJsonBounds(json);
  if (bounds !== null) return { ok: false, error: bounds };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: `expected an object, got ${Array.isArray(value) ? "an array" : typeof value}`,
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** The message of a `tool-call-invalid` event: the same words for every provider. */
export function invalidInputMessage(name: string, error: string): string {
  return `Input for tool "${name}" is not valid JSON: ${error}`;
}

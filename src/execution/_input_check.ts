/**
 * The schema gate's checks and messages: validates a call's untrusted input against the tool's zod
 * schema and says, for the model, which field is wrong, what was expected and what came.
 *
 * @module
 */
import type { z } from "zod";
import type { AnyTool } from "../tools/tool.ts";

/** The input parsed by the tool's schema, or the message for the model. */
export type Parsed = { ok: true; input: unknown } | { ok: false; message: string };

/** Validates an input against the tool's schema. */
export function parseInput(tool: AnyTool, input: unknown): Parsed {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return {
      ok: false,
      message: `Invalid input for ${tool.name}: expected a JSON object, received ${describeValue(input)}`,
    };
  }
  const parsed = tool.inputSchema.safeParse(input, { reportInput: true });
  if (parsed.success) return { ok: true, input: parsed.data };
  const problems = parsed.error.issues.map((issue) => describeIssue(tool, issue));
  return {
    ok: false,
    message: `Invalid input for ${tool.name}: ${problems.join("; ")}. Fix ${
      problems.length > 1 ? "these fields" : "this field"
    } and call ${tool.name} again`,
  };
}

function describeIssue(tool: AnyTool, issue: z.core.$ZodIssue): string {
  const field = issue.path.length ? `"${issue.path.join(".")}"` : "the input";
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) {
        return `missing required field ${field} (expected ${issue.expected}${fieldHint(tool, issue.path)})`;
      }
      return `field ${field} must be ${issue.expected}${fieldHint(tool, issue.path)}, received ${
        describeValue(issue.input)
      }`;
    case "unrecognized_keys": {
      const allowed = Object.keys(tool.jsonSchema.properties).join(", ");
      const keys = issue.keys.map((key) => `"${key}"`).join(", ");
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${keys} (allowed fields: ${allowed})`;
    }
    case "invalid_value":
      return `field ${field} must be one of ${
        issue.values.map((value) => JSON.stringify(value)).join(", ")
      }, received ${describeValue(issue.input)}`;
    default:
      return `field ${field}: ${issue.message}${
        issue.input === undefined ? "" : `, received ${describeValue(issue.input)}`
      }`;
  }
}

function fieldHint(tool: AnyTool, path: readonly PropertyKey[]): string {
  if (path.length !== 1) return "";
  const property = tool.jsonSchema.properties[String(path[0])];
  if (typeof property !== "object" || property === null) return "";
  const description = (property as Record<string, unknown>).description;
  return typeof description === "string" ? `: ${description}` : "";
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array (${truncate(JSON.stringify(value))})`;
  switch (typeof value) {
    case "string":
      return `a string (${truncate(JSON.stringify(value))})`;
    case "number":
      return `a number (${value})`;
    case "boolean":
      return `a boolean (${value})`;
    case "object":
      return `an object (${truncate(JSON.stringify(value))})`;
    default:
      return typeof value;
  }
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

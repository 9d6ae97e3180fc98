/**
 * Structured output for one-shot runs: the user's JSON Schema (inline JSON or `@path`), checked and
 * compiled before any request; the StructuredOutput tool the model answers through; the validation of
 * its input with readable errors; and the text of the one repair turn.
 *
 * ```ts
 * const compiled = await compileOutputSchema('{"type": "object", "properties": {…}, "required": […]}');
 * if (!compiled.ok) fail(compiled.message);                    // before any request
 * tools.push(structuredOutputTool(compiled.schema));
 * // … the model calls StructuredOutput with `input`:
 * const errors = validateOutput(compiled.validate, input);
 * if (errors !== null) resultContent = repairPrompt(errors);   // an is_error tool result, once
 * ```
 *
 * Validation is ajv 8: draft 2020-12 (what the Messages API reads `input_schema` as) unless the schema's
 * `$schema` names draft-07; the standard formats come from ajv-formats. Strict about the schema itself
 * (an unknown keyword such as `"requried"` or an unknown format is an error, since ajv would otherwise
 * ignore it and check nothing), lenient about style (no `strictTypes`: a `properties` without its
 * `"type": "object"` is valid JSON Schema). All errors are collected, not only the first.
 *
 * @module
 */
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { resolve } from "node:path";
import { readUpTo } from "../common/read_up_to.ts";
import { isRecord } from "../common/values.ts";
import type { ToolSpec } from "../llm/provider.ts";

/** The API name of the tool the model gives its final answer through. */
export const STRUCTURED_OUTPUT_TOOL_NAME = "StructuredOutput";

/** One schema violation as ajv reports it (the fields this module reads). */
export interface SchemaViolation {
  /** JSON Pointer to the offending value ("" for the whole value). */
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** The offending value (ajv's `verbose` option). */
  data?: unknown;
}

/** A compiled schema: true when a value matches; otherwise `errors` says why. */
export interface OutputValidator {
  (value: unknown): boolean;
  errors?: readonly SchemaViolation[] | null;
}

/** The outcome of {@link compileOutputSchema}. */
export type CompiledOutputSchema =
  | { ok: true; schema: Record<string, unknown>; validate: OutputValidator }
  | { ok: false; message: string };

/** One reason a value does not match, for the model: where (`items.0.name`, or `(root)`) and what. */
export interface OutputError {
  path: string;
  message: string;
}

/** A schema file larger than this is refused before it is read. */
export const MAX_SCHEMA_FILE_BYTES = 1024 * 1024;

const DRAFT_2020_12 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

/**
 * Reads and compiles an output schema: `text` is the schema's JSON, or `@path` to a file holding it
 * (relative to `options.cwd`, the current directory by default). The top level must be an object schema,
 * since it becomes a tool's input schema.
 */
export async function compileOutputSchema(
  text: string,
  options: { cwd?: string } = {},
): Promise<CompiledOutputSchema> {
  const trimmed = text.trim();
  if (trimmed === "") return failure('Cannot use the output schema: it is empty; give JSON or "@path"');
  if (!trimmed.startsWith("@")) return compileText(trimmed, "the output schema");
  const path = trimmed.slice(1).trim();
  if (path === "") return failure('Cannot read the output schema: no file name after "@"');
  const read = await readSchemaFile(path, options.cwd ?? Deno.cwd());
  return read.ok ? compileText(read.text, `the output schema in "${path}"`) : read;
}

async function readSchemaFile(
  path: string,
  cwd: string,
): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  const absolute = resolve(cwd, path);
  const cannot = (reason: string) => failure(`Cannot read the output schema file "${path}": ${reason}`);
  try {
    const read = await readUpTo(absolute, MAX_SCHEMA_FILE_BYTES);
    if (read.status === "not-a-file") return cannot("it is not a file or a pipe");
    if (read.status === "too-large") {
      const size = read.size === null ? "it holds more than" : `it is ${read.size} bytes, above`;
      return cannot(`${size} the limit of ${MAX_SCHEMA_FILE_BYTES}`);
    }
    return { ok: true, text: new TextDecoder().decode(read.bytes) };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return cannot("no such file");
    if (error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotCapable) {
      return cannot("permission denied");
    }
    return cannot(error instanceof Error ? error.message : String(error));
  }
}

function compileText(text: string, source: string): CompiledOutputSchema {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return failure(`Cannot parse ${source}: it is not valid JSON: ${reason}`);
  }
  const cannot = (reason: string) => failure(`Cannot use ${source}: ${reason}`);
  if (!isRecord(schema)) return cannot("it must be a JSON object (a JSON Schema)");
  if (schema.type !== "object") {
    return cannot(
      'its top level must be an object schema ({"type": "object", "properties": {…}}), since it becomes ' +
        "the input of a tool; put any other value in a property",
    );
  }
  const ajv = validatorFor(schema.$schema);
  if (typeof ajv === "string") return cannot(ajv);
  try {
    return { ok: true, schema, validate: ajv.compile(schema) };
  } catch (error) {
    if (error instanceof RangeError) return cannot("it is nested too deeply");
    const reason = error instanceof Error ? error.message : String(error);
    // ajv words an unknown format as a warning ("… ignored in schema at path …"), but it is refused here.
    return cannot(`it is not a valid JSON Schema: ${reason.replace(" ignored in schema at path ", " at ")}`);
  }
}

/** A fresh validator for the schema's draft, or why the draft is not supported. */
function validatorFor(draft: unknown): Ajv | Ajv2020 | string {
  const options = {
    allErrors: true,
    verbose: true,
    strictSchema: true,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    logger: false,
  } as const;
  // ajv-formats is CommonJS: its default import is the module, whose `default` is the plugin.
  if (draft === undefined || (typeof draft === "string" && DRAFT_2020_12.test(draft))) {
    return addFormats.default(new Ajv2020(options));
  }
  if (typeof draft === "string" && DRAFT_07.test(draft)) return addFormats.default(new Ajv(options));
  return `its "$schema" is ${
    JSON.stringify(draft)
  }: use draft 2020-12 (the default when "$schema" is absent) or draft-07`;
}

function failure(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

/** The tool the model gives its final answer through: its input schema is the output schema. */
export function structuredOutputTool(schema: Record<string, unknown>): ToolSpec {
  return {
    name: STRUCTURED_OUTPUT_TOOL_NAME,
    description: "Give the final answer of the task as structured data. Call this tool exactly once, when " +
      "the task is done, with the complete answer as its input; the input must match this tool's schema. " +
      "Only this input is returned to the user: do not also write the answer as text, and call no other " +
      "tool in the same turn.",
    inputSchema: schema,
  };
}

/** Validates the model's StructuredOutput input: null when it matches, else every violation. */
export function validateOutput(validate: OutputValidator, value: unknown): OutputError[] | null {
  if (validate(value)) return null;
  const violations = validate.errors ?? [];
  if (violations.length === 0) return [{ path: "(root)", message: "does not match the schema" }];
  return violations.map(describeViolation);
}

function describeViolation(violation: SchemaViolation): OutputError {
  const path = pointerToPath(violation.instancePath);
  const { params } = violation;
  const message = violation.message ?? `fails "${violation.keyword}"`;
  switch (violation.keyword) {
    case "required":
      return { path: joinPath(path, String(params.missingProperty)), message: "is required but missing" };
    case "additionalProperties":
      return { path: joinPath(path, String(params.additionalProperty)), message: "is not allowed here" };
    case "enum":
      return {
        path,
        message: `must be one of ${preview(params.allowedValues)}, received ${preview(violation.data)}`,
      };
    case "type":
    case "const":
    case "format":
    case "pattern":
      return { path, message: `${message}, received ${preview(violation.data)}` };
    default:
      return { path, message };
  }
}

/** `/items/0/name` → `items.0.name`; the whole value is `(root)`. */
function pointerToPath(pointer: string): string {
  if (pointer === "") return "(root)";
  return pointer.slice(1).split("/").map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~")).join(
    ".",
  );
}

function joinPath(path: string, key: string): string {
  return path === "(root)" ? key : `${path}.${key}`;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** At most this many violations are listed in the repair message. */
const MAX_LISTED_ERRORS = 20;

/** The one repair message (an error tool result for the StructuredOutput call) listing what to fix. */
export function repairPrompt(errors: readonly OutputError[]): string {
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map((error) => `- ${error.path}: ${error.message}`);
  const more = errors.length > MAX_LISTED_ERRORS ? [`- …and ${errors.length - MAX_LISTED_ERRORS} more`] : [];
  return [
    `The ${STRUCTURED_OUTPUT_TOOL_NAME} input does not match the required schema:`,
    ...listed,
    ...more,
    `Call ${STRUCTURED_OUTPUT_TOOL_NAME} again, once, with the complete corrected answer (all fields, not ` +
    "only the ones that changed).",
  ].join("\n");
}

import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import {
  compileOutputSchema,
  MAX_SCHEMA_FILE_BYTES,
  type OutputError,
  type OutputValidator,
  repairPrompt,
  STRUCTURED_OUTPUT_TOOL_NAME,
  structuredOutputTool,
  validateOutput,
} from "../../src/agent/structured_output.ts";
import { makeFifo, releaseWriters } from "../_fakes/fifo.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

const SCHEMA = {
  type: "object",
  properties: {
    summary: { type: "string", minLength: 1 },
    severity: { enum: ["low", "medium", "high"] },
    contact: { type: "string", format: "email" },
    files: {
      type: "array",
      items: {
        type: "object",
        properties: { path: { type: "string", pattern: "^/" }, lines: { type: "integer", minimum: 1 } },
        required: ["path"],
        additionalProperties: false,
      },
    },
  },
  required: ["summary", "severity"],
  additionalProperties: false,
};

/** Compiles a schema that must be valid and returns its validator. */
async function validatorOf(text: string, options: { cwd?: string } = {}): Promise<OutputValidator> {
  const compiled = await compileOutputSchema(text, options);
  ok(compiled.ok, compiled.ok ? "" : compiled.message);
  return compiled.validate;
}

async function messageOf(text: string, options: { cwd?: string } = {}): Promise<string> {
  const compiled = await compileOutputSchema(text, options);
  ok(!compiled.ok, `expected ${JSON.stringify(text)} to be refused`);
  return compiled.message;
}

Deno.test("compileOutputSchema compiles inline JSON and returns the parsed schema", async () => {
  const compiled = await compileOutputSchema(`  ${JSON.stringify(SCHEMA)}\n`);
  ok(compiled.ok);
  deepStrictEqual(compiled.schema, SCHEMA);
  equal(validateOutput(compiled.validate, { summary: "Fine", severity: "low" }), null);
});

Deno.test("compileOutputSchema reads @path relative to cwd, or absolute", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.mkdir(`${workspace.root}/schemas`);
  await Deno.writeTextFile(`${workspace.root}/schemas/report.json`, JSON.stringify(SCHEMA, null, 2));
  for (
    const text of ["@schemas/report.json", `@${workspace.root}/schemas/report.json`, " @ schemas/report.json"]
  ) {
    const compiled = await compileOutputSchema(text, { cwd: workspace.root });
    ok(compiled.ok, compiled.ok ? "" : compiled.message);
    deepStrictEqual(compiled.schema, SCHEMA);
  }
});

Deno.test("compileOutputSchema explains why a schema file cannot be read", async (t) => {
  await using workspace = await createTempWorkspace();
  const cwd = workspace.root;
  await Deno.writeTextFile(`${cwd}/bad.json`, '{"type": "object",');
  await Deno.writeTextFile(`${cwd}/huge.json`, " ".repeat(MAX_SCHEMA_FILE_BYTES + 1));
  const cases: [string, string | RegExp][] = [
    ["@missing.json", 'Cannot read the output schema file "missing.json": no such file'],
    ["@.", 'Cannot read the output schema file ".": it is not a file or a pipe'],
    [
      "@huge.json",
      `Cannot read the output schema file "huge.json": it is ${
        MAX_SCHEMA_FILE_BYTES + 1
      } bytes, above the limit of ${MAX_SCHEMA_FILE_BYTES}`,
    ],
    ["@bad.json", /^Cannot parse the output schema in "bad\.json": it is not valid JSON: /],
    ["@", 'Cannot read the output schema: no file name after "@"'],
  ];
  for (const [text, expected] of cases) {
    await t.step(text, async () => {
      const message = await messageOf(text, { cwd });
      if (typeof expected === "string") equal(message, expected);
      else match(message, expected);
    });
  }
});

Deno.test("compileOutputSchema refuses invalid JSON and invalid or unusable schemas before any request", async (t) => {
  const cases: [string, string, RegExp][] = [
    ["empty text", "  ", /^Cannot use the output schema: it is empty; give JSON or "@path"$/],
    ["invalid JSON", "{type: object}", /^Cannot parse the output schema: it is not valid JSON: /],
    ["not an object", "[1, 2]", /^Cannot use the output schema: it must be a JSON object/],
    ["a string schema", '{"type": "string"}', /its top level must be an object schema \(\{"type": "object"/],
    [
      "no top-level type",
      '{"properties": {"a": {"type": "string"}}}',
      /its top level must be an object schema/,
    ],
    [
      "a misspelt type",
      '{"type": "object", "properties": {"a": {"type": "strin"}}}',
      /^Cannot use the output schema: it is not a valid JSON Schema: schema is invalid: data\/properties\/a\/type /,
    ],
    [
      "a misspelt keyword",
      '{"type": "object", "requried": ["a"]}',
      /it is not a valid JSON Schema: strict mode: unknown keyword: "requried"$/,
    ],
    [
      "an unknown format",
      '{"type": "object", "properties": {"a": {"type": "string", "format": "phone-number"}}}',
      /it is not a valid JSON Schema: unknown format "phone-number" at "#\/properties\/a"$/,
    ],
    [
      "a reference to nothing",
      '{"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}',
      /it is not a valid JSON Schema: can't resolve reference #\/\$defs\/missing/,
    ],
    [
      "an unsupported draft",
      '{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}',
      /its "\$schema" is "http:\/\/json-schema\.org\/draft-04\/schema#": use draft 2020-12 .* or draft-07$/,
    ],
  ];
  for (const [name, text, expected] of cases) {
    await t.step(name, async () => match(await messageOf(text), expected));
  }
});

Deno.test("compileOutputSchema accepts draft 2020-12 and draft-07 schemas with references", async (t) => {
  await t.step("2020-12 with $defs and prefixItems", async () => {
    const validate = await validatorOf(JSON.stringify({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false },
      },
      properties: { at: { $ref: "#/$defs/point" } },
      required: ["at"],
    }));
    equal(validateOutput(validate, { at: [1, 2] }), null);
    deepStrictEqual(validateOutput(validate, { at: [1, 2, 3] }), [{
      path: "at",
      message: "must NOT have more than 2 items",
    }]);
  });
  await t.step("draft-07 with definitions", async () => {
    const validate = await validatorOf(JSON.stringify({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      definitions: { name: { type: "string" } },
      properties: { name: { $ref: "#/definitions/name" } },
      required: ["name"],
    }));
    equal(validateOutput(validate, { name: "mewcode" }), null);
    deepStrictEqual(validateOutput(validate, { name: 7 }), [{
      path: "name",
      message: "must be string, received 7",
    }]);
  });
});

Deno.test("validateOutput lists every violation with its path and a readable message", async (t) => {
  const validate = await validatorOf(JSON.stringify(SCHEMA));
  const cases: [string, unknown, OutputError[] | null][] = [
    [
      "a complete answer",
      { summary: "Two bugs", severity: "high", contact: "a@b.org", files: [{ path: "/a.ts", lines: 3 }] },
      null,
    ],
    ["not an object", "Two bugs", [{ path: "(root)", message: 'must be object, received "Two bugs"' }]],
    [
      "missing fields",
      {},
      [
        { path: "summary", message: "is required but missing" },
        { path: "severity", message: "is required but missing" },
      ],
    ],
    [
      "an extra field",
      { summary: "x", severity: "low", notes: "" },
      [{ path: "notes", message: "is not allowed here" }],
    ],
    [
      "a value outside the enum",
      { summary: "x", severity: "urgent" },
      [{ path: "severity", message: 'must be one of ["low","medium","high"], received "urgent"' }],
    ],
    [
      "a bad format",
      { summary: "x", severity: "low", contact: "nobody" },
      [{ path: "contact", message: 'must match format "email", received "nobody"' }],
    ],
    [
      "nested violations",
      {
        summary: "",
        severity: "low",
        files: [{ path: "/ok.ts" }, { path: "rel.ts", lines: 0, size: 1 }, {}],
      },
      [
        { path: "summary", message: "must NOT have fewer than 1 characters" },
        { path: "files.1.size", message: "is not allowed here" },
        { path: "files.1.path", message: 'must match pattern "^/", received "rel.ts"' },
        { path: "files.1.lines", message: "must be >= 1" },
        { path: "files.2.path", message: "is required but missing" },
      ],
    ],
  ];
  for (const [name, value, expected] of cases) {
    await t.step(name, () => deepStrictEqual(validateOutput(validate, value), expected));
  }
});

Deno.test("validateOutput unescapes JSON Pointer paths and reports a failure without details at the root", () => {
  const validate = Object.assign((_value: unknown) => false, {
    errors: [{
      instancePath: "/a~1b/c~0d",
      keyword: "type",
      message: "must be number",
      params: {},
      data: "x",
    }],
  });
  deepStrictEqual(validateOutput(validate, {}), [{
    path: "a/b.c~d",
    message: 'must be number, received "x"',
  }]);
  deepStrictEqual(validateOutput(() => false, {}), [{
    path: "(root)",
    message: "does not match the schema",
  }]);
});

Deno.test("structuredOutputTool offers the schema as the input of a StructuredOutput tool to call exactly once", () => {
  const tool = structuredOutputTool(SCHEMA);
  equal(tool.name, STRUCTURED_OUTPUT_TOOL_NAME);
  equal(tool.name, "StructuredOutput");
  equal(tool.inputSchema, SCHEMA);
  match(tool.description, /exactly once, when the task is done/);
  match(tool.description, /do not also write the answer as text/);
});

Deno.test("repairPrompt lists the violations and asks for one complete corrected call", async (t) => {
  await t.step("two errors", () => {
    equal(
      repairPrompt([
        { path: "summary", message: "is required but missing" },
        { path: "files.1.lines", message: "must be >= 1" },
      ]),
      "The StructuredOutput input does not match the required schema:\n" +
        "- summary: is required but missing\n" +
        "- files.1.lines: must be >= 1\n" +
        "Call StructuredOutput again, once, with the complete corrected answer (all fields, not only the " +
        "ones that changed).",
    );
  });
  await t.step("more than 20 errors", () => {
    const errors = Array.from(
      { length: 25 },
      (_, index) => ({ path: `items.${index}`, message: "must be string" }),
    );
    const lines = repairPrompt(errors).split("\n");
    equal(lines.length, 1 + 20 + 1 + 1);
    equal(lines[20], "- items.19: must be string");
    equal(lines[21], "- …and 5 more");
  });
});

Deno.test("compileOutputSchema reads a schema from a pipe, as --json-schema @<(jq …) gives it", async () => {
  await using workspace = await createTempWorkspace();
  const pipe = `${workspace.root}/schema.pipe`;
  await makeFifo(pipe);
  const writing = (async () => {
    using writer = await Deno.open(pipe, { write: true });
    await writer.write(new TextEncoder().encode(JSON.stringify(SCHEMA)));
  })();
  const compiled = await compileOutputSchema(`@${pipe}`);
  // One that never read the pipe leaves the writer waiting for a reader: let it go.
  await releaseWriters(pipe);
  await writing.catch(() => {});
  ok(compiled.ok, compiled.ok ? "" : compiled.message);
  deepStrictEqual(compiled.schema, SCHEMA);
});

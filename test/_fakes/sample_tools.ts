/**
 * Small tools for testing the framework itself (registry, pipeline, executor), one of each class.
 *
 * @module
 */
import { z } from "zod";
import { defineTool, textResult } from "../../src/tools/tool.ts";

/** A read-only tool that echoes its input. */
export const echoTool = defineTool({
  name: "Echo",
  description: "Echoes the text back. Test tool.",
  category: "other",
  inputSchema: z.object({
    text: z.string().describe("Text to echo"),
    times: z.number().int().positive().optional().describe("How many times"),
  }).strict(),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  validateInput: (input) => input.text.includes("\0") ? 'Cannot echo "text": it contains a NUL byte' : null,
  execute: (_context, input) =>
    Promise.resolve(textResult(input.text.repeat(input.times ?? 1), { echoed: true })),
});

/** A non-destructive writer (does not write anything; only its metadata matters). */
export const noteTool = defineTool({
  name: "Note",
  description: "Pretends to write a note. Test tool.",
  category: "file",
  inputSchema: z.object({ note: z.string().describe("The note") }).strict(),
  isDestructive: false,
  execute: (_context, input) => Promise.resolve(textResult(`noted ${input.note}`)),
});

/** A destructive tool. */
export const nukeTool = defineTool({
  name: "Nuke",
  description: "Pretends to destroy things. Test tool.",
  category: "shell",
  inputSchema: z.object({}).strict(),
  execute: () => Promise.resolve(textResult("boom")),
});

/** A tool whose execute throws. */
export const throwingTool = defineTool({
  name: "Thrower",
  description: "Always throws. Test tool.",
  category: "other",
  inputSchema: z.object({}).strict(),
  isReadOnly: true,
  execute: () => Promise.reject(new RangeError("the dial goes to eleven")),
});

/** A tool that never finishes unless aborted; reports whether it saw the abort. */
export const hangingTool = defineTool({
  name: "Hang",
  description: "Never finishes. Test tool.",
  category: "other",
  inputSchema: z.object({}).strict(),
  isReadOnly: true,
  timeoutMs: () => 200,
  execute: (context) =>
    new Promise((resolve) => {
      context.signal.addEventListener("abort", () => resolve(textResult("saw abort")), { once: true });
    }),
});

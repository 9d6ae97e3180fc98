/**
 * `mewcode tool NAME 'JSON'`: one call through the whole pipeline, the result as JSON on stdout.
 *
 * @module
 */
import type { ToolPipeline } from "../execution/pipeline.ts";
import { checkJsonBounds } from "../common/json_bounds.ts";
import { UsageError } from "./args.ts";

/** The JSON printed by `mewcode tool`. */
export interface ToolCommandOutput {
  content: string;
  is_error: boolean;
  metadata: Record<string, unknown>;
}

/** Parses the JSON input argument; malformed JSON is a usage error (exit 2). */
export function parseToolInput(text: string): unknown {
  const bounds = checkJsonBounds(text);
  if (bounds !== null) throw new UsageError(`Cannot use the tool input: ${bounds}`);
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `Cannot parse the tool input as JSON: ${reason}: pass one JSON object, e.g. '{"path": "/abs/file"}'`,
    );
  }
}

/** Runs one call and returns what to print and the exit status (0 success, 1 error result). */
export async function runToolCommand(
  pipeline: ToolPipeline,
  call: { name: string; input: unknown },
  options: { signal: AbortSignal },
): Promise<{ output: ToolCommandOutput; exitCode: 0 | 1 }> {
  const result = await pipeline.run({ id: `cli_${crypto.randomUUID()}`, ...call }, options);
  return {
    output: { content: result.content, is_error: result.isError, metadata: result.metadata },
    exitCode: result.isError ? 1 : 0,
  };
}

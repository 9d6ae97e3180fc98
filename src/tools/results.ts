/**
 * The builders of tool results, in a module of their own: the agent loop builds results too, and must not
 * load zod (tool.ts) to do so.
 *
 * @module
 */
import type { ToolResult, ToolStop } from "./tool.ts";

/** A result of a tool that stopped early (`stop`), with what it had so far for the model. */
export function stoppedResult(
  content: string,
  stop: ToolStop,
  metadata: Record<string, unknown> = {},
): ToolResult {
  return { content, isError: true, metadata, stop };
}

/** A successful result with text for the model. */
export function textResult(content: string, metadata: Record<string, unknown> = {}): ToolResult {
  return { content, isError: false, metadata };
}

/** An error result: the message tells the model what failed and what to do instead. */
export function errorResult(content: string, metadata: Record<string, unknown> = {}): ToolResult {
  return { content, isError: true, metadata };
}

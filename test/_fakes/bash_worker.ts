/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * A worker that runs the Bash tool (its runner, as the tool worker does) on one request, for tests that check Bash needs no permission beyond
 * spawning its sandbox binary (or its shell).
 *
 * @module
 */
import { bashRunner } from "../../src/tools/_bash_run.ts";
import type { ToolCallContext, ToolResult } from "../../src/tools/tool.ts";

/** What the test posts: the structured-cloneable context, the input, and an optional abort delay. */
export interface BashWorkerRequest {
  context: ToolCallContext;
  input: { command: string; timeout?: number };
  /** Abort the call this many milliseconds after it started. */
  abortAfterMs?: number;
}

/** What the worker posts back. */
export type BashWorkerResponse = { ok: true; result: ToolResult } | { ok: false; error: string };

self.onmessage = async (event: MessageEvent<BashWorkerRequest>) => {
  const { context, input, abortAfterMs } = event.data;
  const controller = new AbortController();
  const timer = abortAfterMs === undefined ? undefined : setTimeout(() => controller.abort(), abortAfterMs);
  let response: BashWorkerResponse;
  try {
    response = {
      ok: true,
      result: await bashRunner.execute({ ...context, signal: controller.signal }, input),
    };
  } catch (error) {
    response = {
      ok: false,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  } finally {
    clearTimeout(timer);
  }
  self.postMessage(response);
};

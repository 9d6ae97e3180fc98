/**
 * What `mewcode tools` shows, without opening a session: the tools a session would offer, as plain rows,
 * and the exact `tools` array the provider sends.
 *
 * @module
 */
import { sessionRegistry } from "../execution/runtime.ts";
import { toWireTools } from "../llm/anthropic_wire.ts";

/** One tool as `mewcode tools` lists it. */
export interface ToolSummary {
  name: string;
  category: string;
  /** "read-only", "writes" or "destructive". */
  access: string;
  description: string;
}

/** The tools a session offers (only the read-only ones with `readOnly`), in the order the model sees them. */
export function toolSummaries(options: { readOnly: boolean }): ToolSummary[] {
  return sessionRegistry(options).listEnabled().map((tool) => ({
    name: tool.name,
    category: tool.category,
    access: tool.isReadOnly() ? "read-only" : tool.isDestructive() ? "destructive" : "writes",
    description: tool.description,
  }));
}

/** The `tools` array of a Messages API request, exactly as the Anthropic provider sends it. */
export function apiTools(options: { readOnly: boolean }): unknown[] {
  return toWireTools(sessionRegistry(options).toolSpecs());
}

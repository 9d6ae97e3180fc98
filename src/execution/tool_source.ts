/**
 * What the agent loop needs of the tools: what to offer the model, and the pipeline that runs the calls,
 * which may load only when the model first asks for a tool. A ToolPipeline is its own source; a session
 * whose tools have not loaded yet hands the loop one built from the catalog (src/tools/catalog.ts).
 *
 * @module
 */
import type { ToolRegistry } from "../tools/registry.ts";
import type { ToolInfo } from "../tools/tool.ts";
import type { ToolPipeline } from "./pipeline.ts";

/** The tools of a run, loaded or not. */
export interface ToolSource {
  /** The tools offered to the model. */
  readonly registry: Pick<ToolRegistry<ToolInfo>, "toolSpecs" | "get">;
  /**
   * The model's response began (`name` undefined), or a call to the tool `name` began (its input is still
   * streaming): get ready for calls, or for that tool. Never throws.
   */
  expect(name?: string): void;
  /** The pipeline, loaded once; rejects when the tools cannot start (each call then ends with the reason). */
  load(): Promise<ToolPipeline>;
}

/**
 * The built-in tools as the model is offered them, without their code: names, descriptions, JSON Schemas
 * and the metadata a worker's profile is derived from. A session builds its first request from this, so
 * neither the tools' modules nor zod load before that request is on its way (the tools load when the
 * model starts its first call).
 *
 * catalog.json is generated from the tools themselves (`deno task catalog`, scripts/tool_catalog.ts);
 * test/tools/catalog_test.ts fails when it no longer says exactly what BUILTIN_TOOLS say.
 *
 * @module
 */
import entries from "./catalog.json" with { type: "json" };
import type { InputJsonSchema, ToolCategory, ToolInfo } from "./tool.ts";

/** One tool of catalog.json. */
export interface CatalogEntry {
  name: string;
  description: string;
  category: ToolCategory;
  readOnly: boolean;
  destructive: boolean;
  jsonSchema: InputJsonSchema;
}

/** The catalog entry of a tool (what scripts/tool_catalog.ts writes). */
export function catalogEntry(tool: ToolInfo): CatalogEntry {
  return {
    name: tool.name,
    description: tool.description,
    category: tool.category,
    readOnly: tool.isReadOnly(),
    destructive: tool.isDestructive(),
    jsonSchema: tool.jsonSchema,
  };
}

function toolInfo(entry: CatalogEntry): ToolInfo {
  return {
    name: entry.name,
    description: entry.description,
    category: entry.category,
    jsonSchema: entry.jsonSchema,
    isReadOnly: () => entry.readOnly,
    isDestructive: () => entry.destructive,
  };
}

/** Every built-in tool, described, in the order of BUILTIN_TOOLS. */
export const BUILTIN_TOOL_INFO: readonly ToolInfo[] = (entries as CatalogEntry[]).map(toolInfo);

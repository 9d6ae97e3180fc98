/**
 * `mewcode tools [--json]`: the enabled tools as a table, or the exact API array.
 *
 * @module
 */
import { apiTools, toolSummaries } from "../session/tool_listing.ts";

/** Renders the enabled tools: JSON exactly as sent to the API, or an aligned table for people. */
export function renderTools(options: { json: boolean; readOnly: boolean }): string {
  if (options.json) return JSON.stringify(apiTools(options), null, 2);
  const rows = toolSummaries(options).map((tool) => [
    tool.name,
    tool.category,
    tool.access,
    firstSentence(tool.description),
  ]);
  const header = ["TOOL", "CATEGORY", "ACCESS", "SUMMARY"];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length))
  );
  const line = (cells: string[]) =>
    cells.map((cell, column) => column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)).join("  ");
  return [line(header), ...rows.map(line)].join("\n");
}

function firstSentence(text: string): string {
  const match = /^(.+?[.!?])(\s|$)/s.exec(text.trim());
  return (match?.[1] ?? text.trim()).replace(/\s+/g, " ");
}

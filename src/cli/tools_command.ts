/**
 * `mewcode tools [--json]`: the tools a session would offer the model, as a table, or the exact API array.
 * A tool a deny rule names whole (`--disallowedTools Bash`, `"deny": ["Bash"]` in a settings file) is left
 * out, as the session leaves it out (src/session/offered_tools.ts), and the listing says which rule did it.
 *
 * @module
 */
import { describeOrigin, formatRule, type Rule } from "../permissions/rules.ts";
import { wholeToolDenials } from "../session/offered_tools.ts";
import { apiTools, toolSummaries } from "../session/tool_listing.ts";
import { sanitizeLines } from "./_terminal_text.ts";

/** What `mewcode tools` prints: `stdout`, and the lines for stderr (why a tool is left out of the JSON). */
export interface ToolsListing {
  stdout: string;
  stderr: string[];
}

/**
 * Renders the tools a session offers with these rules: JSON exactly as sent to the API, or an aligned table
 * for people followed by a line for each tool a deny rule takes out (on stderr with `json`).
 */
export function renderTools(
  options: { json: boolean; readOnly: boolean; rules: readonly Rule[] },
): ToolsListing {
  const hidden = wholeToolDenials(options.rules);
  const enabled = toolSummaries(options);
  const left = enabled.filter((tool) => hidden.has(tool.name)).map((tool) => {
    const rule = options.rules.find((rule) =>
      rule.action === "deny" && rule.specifier === undefined && rule.tool === tool.name
    )!;
    // The origin names a settings file by its path, which a workspace's name could fill with escapes.
    return { name: tool.name, why: sanitizeLines(`${formatRule(rule)}, ${describeOrigin(rule)}`) };
  });
  if (options.json) {
    const tools = apiTools(options).filter((tool) => !hidden.has((tool as { name: string }).name));
    return {
      stdout: JSON.stringify(tools, null, 2),
      stderr: left.map((tool) =>
        `mewcode: ${tool.name} is not offered: a deny rule names it whole (${tool.why})`
      ),
    };
  }
  const rows = enabled.filter((tool) => !hidden.has(tool.name)).map((tool) => [
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
  const notOffered = left.map((tool) =>
    `Not offered: ${tool.name} (a deny rule names it whole: ${tool.why})`
  );
  return {
    stdout: [line(header), ...rows.map(line), ...(notOffered.length === 0 ? [] : ["", ...notOffered])].join(
      "\n",
    ),
    stderr: [],
  };
}

function firstSentence(text: string): string {
  const match = /^(.+?[.!?])(\s|$)/s.exec(text.trim());
  return (match?.[1] ?? text.trim()).replace(/\s+/g, " ");
}

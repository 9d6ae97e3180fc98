import { deepStrictEqual, ok } from "node:assert/strict";
import { EXIT } from "../../src/cli/exit_codes.ts";
import { OPTIONS } from "../../src/cli/options.ts";
import { STREAM_EVENT_LINE_TYPES } from "../../src/cli/output_format.ts";

const README = await Deno.readTextFile(new URL("../../README.md", import.meta.url));

/** The status the launcher (scripts/mewcode) exits with when it finds no Deno: not main.ts's. */
const LAUNCHER_NO_DENO = 127;

/** The rows of the first Markdown table after `marker`, each as its cells (the header and rule left out). */
function tableAfter(marker: string): string[][] {
  const start = README.indexOf(marker);
  ok(start !== -1, `the README has "${marker}"`);
  const lines = README.slice(start).split("\n");
  const first = lines.findIndex((line) => line.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    // A `\|` inside a cell is a character of the cell, not a border.
    rows.push(line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim()));
  }
  return rows;
}

/** Every `--name` (and `-x`) a flags-table cell names; `…-file` continues the long name before it. */
function flagsOf(cell: string): string[] {
  const flags: string[] = [];
  for (const [, code] of cell.matchAll(/`([^`]+)`/g)) {
    const word = code!.split(" ")[0]!;
    const previous = flags.findLast((flag) => flag.startsWith("--"));
    if (word.startsWith("…") && previous !== undefined) flags.push(previous + word.slice(1));
    else if (word.startsWith("-")) flags.push(word);
  }
  return flags;
}

Deno.test("README's flags table names exactly the options of src/cli/options.ts", () => {
  const table = tableAfter("\n### Flags\n").flatMap(([flags]) => flagsOf(flags!));
  const options = OPTIONS.flatMap((option) => [
    `--${option.name}`,
    ...option.short === undefined ? [] : [`-${option.short}`],
  ]);
  deepStrictEqual(
    options.filter((flag) => !table.includes(flag)),
    [],
    "options --help lists but the README's table does not",
  );
  deepStrictEqual(
    table.filter((flag) => !options.includes(flag)),
    [],
    "flags in the table mewcode does not know",
  );
});

Deno.test("README's exit status table lists every status mewcode exits with, and no other", () => {
  const rows = tableAfter("\n### Exit status\n");
  const statuses = rows.map(([status]) => Number(status));
  deepStrictEqual(
    statuses.toSorted((a, b) => a - b),
    [...Object.values(EXIT), LAUNCHER_NO_DENO].toSorted((a, b) => a - b),
  );
});

Deno.test("README's tables hold no cell cut short by an unescaped | in its code", () => {
  for (const heading of ["\n### Flags\n", "\n### Exit status\n"]) {
    for (const row of tableAfter(heading)) {
      for (const cell of row) {
        ok(
          (cell.match(/`/g) ?? []).length % 2 === 0,
          `${heading.trim()}: a cell opens code it never closes: ${cell}`,
        );
      }
    }
  }
});

Deno.test("README's stream-json table names every line type mewcode writes", () => {
  const table = tableAfter("**`--output-format stream-json`**")
    .map(([type]) => type!.replaceAll("`", ""));
  deepStrictEqual(table.toSorted(), ["system", ...STREAM_EVENT_LINE_TYPES, "result"].toSorted());
});

/**
 * What the approval question shows of a Bash command: all of it, or a marked start and end. A command cut to
 * its first 20 lines, each cut to the screen's width, once ran a line nobody was shown after "Yes".
 */
import { equal, ok } from "node:assert/strict";
import { commandRows, MAX_COMMAND_ROWS } from "../../../src/cli/interactive/approval.ts";
import { createStyle } from "../../../src/cli/interactive/style.ts";

const style = createStyle({ colors: false });

Deno.test("commandRows shows a 21st line and the end of a line longer than the screen", () => {
  const lines = Array.from({ length: 20 }, (_, index) => `echo step ${index}`);
  const rows = commandRows([...lines, "touch PWNED_hidden_line"].join("\n"), 60, style);
  equal(rows.length, 21);
  ok(rows.at(-1)!.includes("touch PWNED_hidden_line"), rows.join("\n"));
  const long = commandRows(`echo ${"a".repeat(200)}; touch PWNED_long_line`, 60, style);
  ok(long.length > 1 && long.every((row) => row.length <= 60), long.join("\n"));
  ok(long.join("").includes("touch PWNED_long_line"), long.join("\n"));
});

Deno.test("commandRows shows the start and the end of a longer command, and says how much it leaves out", () => {
  const command = Array.from({ length: 100 }, (_, index) => `echo line ${index}`).join("\n");
  const rows = commandRows(command, 60, style);
  equal(rows.length, MAX_COMMAND_ROWS);
  ok(rows[0]!.includes("echo line 0"));
  ok(rows.at(-1)!.includes("echo line 99"));
  ok(rows.some((row) => row.includes("61 more rows not shown (100 in all)")), rows.join("\n"));
});

/**
 * A program for terminal_test.ts to run in a real pseudo-terminal: it registers `restoreOnExit` (twice, to show
 * that is harmless), turns on raw mode, bracketed paste and a hidden cursor, writes an unfinished line, tells
 * the test it is ready by writing its pid to the file named in its second argument, then ends as its first
 * argument says: "signal" waits to be killed; "error" throws from a timer after the first key; "rejection"
 * leaves a promise rejected after the first key; "exit" calls `Deno.exit(0)` after the first key.
 *
 * @module
 */
import { Terminal } from "../../../src/cli/interactive/terminal.ts";

const [how, readyFile] = Deno.args;
if (readyFile === undefined) {
  throw new TypeError("Usage: _restore_child.ts signal|error|rejection|exit READY_FILE");
}

const terminal = new Terminal();
terminal.restoreOnExit();
terminal.restoreOnExit();
terminal.setRawMode(true);
terminal.setBracketedPaste(true);
terminal.setCursorVisible(false);
terminal.write("> unfinished input");
await Deno.writeTextFile(readyFile, String(Deno.pid));

await terminal.readKey();
switch (how) {
  case "error":
    setTimeout(() => {
      throw new Error("uncaught on purpose");
    }, 0);
    break;
  case "rejection":
    Promise.reject(new Error("rejected on purpose"));
    break;
  case "exit":
    Deno.exit(0);
}
// Keep reading so the process stays alive until it ends as asked.
while (await terminal.readKey() !== null);

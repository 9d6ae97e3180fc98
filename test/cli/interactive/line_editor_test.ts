import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  readLine,
  type ReadLineOptions,
  type ReadLineResult,
} from "../../../src/cli/interactive/line_editor.ts";
import { workspacePathCompleter } from "../../../src/cli/interactive/path_completion.ts";
import { FakeTty } from "./_fake_tty.ts";

const UP = "\x1b[A";
const DOWN = "\x1b[B";
const LEFT = "\x1b[D";
const RIGHT = "\x1b[C";
const HOME = "\x1b[H";
const END = "\x1b[F";
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

interface Session {
  result: ReadLineResult;
  tty: FakeTty;
}

/** Runs one readLine on a fake terminal `columns` wide, feeding each chunk as one read. */
async function edit(
  chunks: string[],
  options: Partial<Omit<ReadLineOptions, "terminal">> & { columns?: number; rows?: number } = {},
): Promise<Session> {
  const { columns, rows, ...rest } = options;
  const tty = new FakeTty(columns ?? 40, rows ?? 12);
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> ", continuationPrompt: ". ", ...rest });
  tty.send(...chunks);
  const result = await reading;
  return { result, tty };
}

function line(text: string, attachments: string[] = []): ReadLineResult {
  return { kind: "line", text, attachments };
}

Deno.test("readLine returns typed text on Enter and leaves it on the screen", async () => {
  const { result, tty } = await edit(["hello world", "\r"]);
  deepEqual(result, line("hello world"));
  equal(tty.screen.text, "> hello world");
  deepEqual([tty.screen.row, tty.screen.column], [1, 0]);
  deepEqual(tty.screen.unexpected, []);
});

Deno.test("readLine edits at the cursor", async (t) => {
  const cases: [string, string[], string][] = [
    ["inserting after moving left", ["helo", LEFT, "l", "\r"], "hello"],
    ["Ctrl+A and Ctrl+E", ["bc", "\x01", "a", "\x05", "d", "\r"], "abcd"],
    ["Home and End", ["bc", HOME, "a", END, "d", "\r"], "abcd"],
    ["Ctrl+Home and Ctrl+End cross lines", ["b\x1b\rc", "\x1b[1;5H", "a", "\x1b[1;5F", "d", "\r"], "ab\ncd"],
    ["Backspace", ["abcd", "\x7f\x7f", "\r"], "ab"],
    ["Backspace at the start does nothing", ["ab", HOME, "\x7f", "\r"], "ab"],
    ["Delete", ["abcd", LEFT, LEFT, "\x1b[3~", "\r"], "abd"],
    ["Ctrl+D on text deletes under the cursor", ["abcd", HOME, "\x04", "\r"], "bcd"],
    ["Ctrl+W deletes the word before the cursor", ["git commit -m", "\x17", "\r"], "git commit "],
    ["Ctrl+W deletes a path whole", ["open src/a.ts  ", "\x17", "\r"], "open "],
    ["Alt+Backspace stops at punctuation", ["open src/a.ts", "\x1b\x7f", "\r"], "open src/a."],
    ["Alt+D deletes the word after the cursor", ["one two three", HOME, "\x1bd", "\r"], " two three"],
    ["Ctrl+K deletes to the end of the line", ["one two", HOME, "\x1bf", "\x0b", "\r"], "one"],
    ["Ctrl+U deletes to the start of the line", ["one two", LEFT, LEFT, LEFT, "\x15", "\r"], "two"],
    ["Ctrl+Y puts back what Ctrl+U deleted", ["one two", "\x15", "x ", "\x19", "\r"], "x one two"],
    [
      "Alt+B and Alt+F move by word",
      ["one two three", "\x1bb", "\x1bb", "_", "\x1bf", "_", "\r"],
      "one _two_ three",
    ],
    [
      "Ctrl+Left and Ctrl+Right move by word",
      ["one two", "\x1b[1;5D", "X", "\x1b[1;5C", "Y", "\r"],
      "one XtwoY",
    ],
    ["Ctrl+B and Ctrl+F move by character", ["ac", "\x02", "b", "\x06", "d", "\r"], "abcd"],
    ["moving right past the end does nothing", ["ab", RIGHT, RIGHT, "c", "\r"], "abc"],
    ["Esc does nothing", ["ab", "\x1b[27u", "c", "\r"], "abc"],
    ["unknown sequences do nothing", ["ab", "\x1b[99X", "\x1bOP", "c", "\r"], "abc"],
    ["combining characters move as one", ["e\u0301x", LEFT, "\x7f", "\r"], "x"],
  ];
  for (const [name, chunks, expected] of cases) {
    await t.step(name, async () => {
      deepEqual((await edit(chunks)).result, line(expected));
    });
  }
});

Deno.test("readLine returns eof for Ctrl+D on an empty prompt and when input ends", async () => {
  deepEqual((await edit(["\x04"])).result, { kind: "eof" });
  const tty = new FakeTty();
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> " });
  tty.send("partial");
  tty.end();
  deepEqual(await reading, { kind: "eof" });
});

Deno.test("readLine returns interrupt for Ctrl+C and says whether the prompt was empty", async () => {
  deepEqual((await edit(["\x03"])).result, { kind: "interrupt", empty: true });
  deepEqual((await edit(["draft", "\x03"])).result, { kind: "interrupt", empty: false });
  const { tty } = await edit(["draft", "\x03"]);
  equal(tty.screen.text, "> draft");
  deepEqual([tty.screen.row, tty.screen.column], [1, 0]);
});

Deno.test("readLine ignores a lone Esc press, told apart from a sequence by the timeout", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal({ escapeTimeoutMs: 5 });
  const reading = readLine({ terminal, prompt: "> " });
  tty.send("ab\x1b");
  await tty.idle();
  await new Promise((resolve) => setTimeout(resolve, 60));
  // Had the ESC not timed out, "\x1bd" would be Alt+D.
  tty.send("d\r");
  deepEqual(await reading, line("abd"));
});

Deno.test("readLine continues on a new line after a trailing backslash", async () => {
  const { result, tty } = await edit(["first line\\", "\r", "second line", "\r"]);
  deepEqual(result, line("first line\nsecond line"));
  equal(tty.screen.text, "> first line\n. second line");
});

Deno.test("readLine turns a backslash into a line break only when it is right before the cursor", async () => {
  deepEqual((await edit(["a\\b", "\r"])).result, line("a\\b"));
  deepEqual((await edit(["a\\b", LEFT, "\r", END, "\r"])).result, line("a\nb"));
});

Deno.test("readLine inserts a newline for each Shift+Enter and Alt+Enter encoding", async (t) => {
  const encodings: [string, string][] = [
    ["ESC CR (Alt+Enter, Shift+Enter in iTerm2 and VS Code setups)", "\x1b\r"],
    ["CSI 13;2u (kitty protocol)", "\x1b[13;2u"],
    ["CSI 27;2;13~ (xterm modifyOtherKeys)", "\x1b[27;2;13~"],
    ["LF (Ctrl+J)", "\n"],
    ["CSI 13;5u (Ctrl+Enter, kitty protocol)", "\x1b[13;5u"],
  ];
  for (const [name, sequence] of encodings) {
    await t.step(name, async () => {
      const { result, tty } = await edit(["one", sequence, "two", "\r"]);
      deepEqual(result, line("one\ntwo"));
      equal(tty.screen.text, "> one\n. two");
    });
  }
});

Deno.test("readLine moves between lines of a multi-line input with Up and Down, keeping the column", async () => {
  const { result } = await edit(["abcdef\x1b\rxy\x1b\rlonger line", UP, UP, "1", DOWN, "2", "\r"]);
  deepEqual(result, line("ab1cdef\nxy2\nlonger line"));
});

Deno.test("readLine walks history with Up and Down and keeps the draft", async () => {
  const history = ["first", "second"];
  const walk = async (chunks: string[]) => (await edit(chunks, { history })).result;
  deepEqual(await walk(["draft", UP, "\r"]), line("second"));
  deepEqual(await walk(["draft", UP, UP, "\r"]), line("first"));
  deepEqual(await walk(["draft", UP, UP, UP, "\r"]), line("first"));
  deepEqual(await walk(["draft", UP, UP, DOWN, "\r"]), line("second"));
  deepEqual(await walk(["draft", UP, UP, DOWN, DOWN, "\r"]), line("draft"));
  deepEqual(await walk(["draft", DOWN, "\r"]), line("draft"));
  deepEqual(await walk(["draft", "\x10", "\x0e", "!", "\r"]), line("draft!"), "Ctrl+P and Ctrl+N");
  deepEqual(
    await walk(["draft", UP, "!", UP, DOWN, "\r"]),
    line("second!"),
    "an edited entry keeps its edit",
  );
  deepEqual(
    (await edit([UP, DOWN, "\r"], { history, initialText: "kept" })).result,
    line("kept"),
    "an untouched draft",
  );
});

Deno.test("readLine recalls a multi-line history entry and moves through its lines before older entries", async () => {
  const history = ["old", "line 1\nline 2"];
  deepEqual((await edit([UP, "!", "\r"], { history })).result, line("line 1\nline 2!"));
  deepEqual((await edit([UP, UP, "!", "\r"], { history })).result, line("line 1!\nline 2"));
  deepEqual((await edit([UP, UP, UP, "\r"], { history })).result, line("old"));
});

Deno.test("readLine wraps long input at the terminal width and redraws it after an edit", async () => {
  const { result, tty } = await edit(["abcdefghijklmnopqrstuvwxyz0123456789", HOME, "*", "\r"], {
    columns: 10,
  });
  deepEqual(result, line("*abcdefghijklmnopqrstuvwxyz0123456789"));
  equal(tty.screen.text, ["> *abcdefg", "hijklmnopq", "rstuvwxyz0", "123456789"].join("\n"));
});

Deno.test("readLine keeps the cursor where the text is while editing a wrapped input", async () => {
  const tty = new FakeTty(10, 12);
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> " });
  tty.send("abcdefghijklmnop", LEFT, LEFT, LEFT, LEFT, LEFT, LEFT, LEFT, LEFT, LEFT, "#");
  await tty.idle();
  deepEqual(tty.screen.visible.slice(0, 2), ["> abcdefg#", "hijklmnop"]);
  // After "#" the cursor is on "h", the first cell of the second row.
  deepEqual([tty.screen.row, tty.screen.column], [1, 0]);
  tty.send("\r");
  deepEqual(await reading, line("abcdefg#hijklmnop"));
});

Deno.test("readLine puts the cursor on the next row when the text fills a row exactly", async () => {
  const tty = new FakeTty(10, 12);
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> " });
  tty.send("12345678");
  await tty.idle();
  deepEqual([tty.screen.row, tty.screen.column], [1, 0]);
  tty.send("9", "\r");
  deepEqual(await reading, line("123456789"));
  equal(tty.screen.text, "> 12345678\n9");
});

Deno.test("readLine lays out wide characters by their display width", async () => {
  const { result, tty } = await edit(["a世界世界世", HOME, "\x06", "\x06", "é", "\r"], { columns: 10 });
  deepEqual(result, line("a世é界世界世"));
  // "界" would straddle the right edge, so it starts the next row, as the terminal would draw it.
  equal(tty.screen.text, "> a世é界世\n界世");
});

Deno.test("readLine shows a continuation prompt on each further line and wraps each line", async () => {
  const { tty } = await edit(["short\x1b\r", "a line longer than ten", "\r"], { columns: 10 });
  equal(tty.screen.text, ["> short", ". a line l", "onger than", " ten"].join("\n"));
});

Deno.test("readLine shows the prompt's colours but measures it without them", async () => {
  const { tty } = await edit(["abcdefgh", "\r"], { columns: 10, prompt: "\x1b[1;36m> \x1b[0m" });
  equal(tty.screen.text, "> abcdefgh");
  deepEqual(tty.screen.unexpected, []);
});

Deno.test("readLine inserts a small paste as text, newlines included, without submitting", async () => {
  const { result, tty } = await edit(["say ", `${PASTE_START}one\rtwo${PASTE_END}`, "!", "\r"]);
  deepEqual(result, line("say one\ntwo!"));
  equal(tty.screen.text, "> say one\n. two!");
});

Deno.test("readLine collapses a large paste into a label and returns its full text", async () => {
  const pasted = Array.from({ length: 120 }, (_, index) => `line ${index + 1}`).join("\n");
  const { result, tty } = await edit(["look: ", `${PASTE_START}${pasted}${PASTE_END}`, " thanks", "\r"]);
  deepEqual(result, line(`look: ${pasted} thanks`));
  equal(tty.screen.text, "> look: [Pasted text: 120 lines] thanks");
});

Deno.test("readLine collapses a long one-line paste by its length", async () => {
  const pasted = "x".repeat(1500);
  const { result, tty } = await edit([`${PASTE_START}${pasted}${PASTE_END}`, "\r"]);
  deepEqual(result, line(pasted));
  equal(tty.screen.text, "> [Pasted text: 1500 chars]");
});

Deno.test("readLine deletes a collapsed paste with one Backspace", async () => {
  const pasted = "a\n".repeat(50);
  const { result } = await edit(["x", `${PASTE_START}${pasted}${PASTE_END}`, "\x7f", "y", "\r"]);
  deepEqual(result, line("xy"));
});

Deno.test("readLine honours the paste collapse limits it is given", async () => {
  const { result, tty } = await edit([`${PASTE_START}a\nb\nc${PASTE_END}`, "\r"], {
    pasteCollapse: { lines: 2, chars: 1000 },
  });
  deepEqual(result, line("a\nb\nc"));
  equal(tty.screen.text, "> [Pasted text: 3 lines]");
});

Deno.test("readLine never writes control characters from pasted text, and returns them as pasted", async () => {
  const pasted = "\x1b[2J\x1b]0;owned\x07\x9b31m\x08tail";
  const { result, tty } = await edit(["before ", `${PASTE_START}${pasted}${PASTE_END}`, "\r"]);
  deepEqual(result, line(`before ${pasted}`));
  deepEqual(tty.screen.unexpected, []);
  equal(tty.screen.text, "> before ␛[2J␛]0;owned␇\ufffd31m␈tail");
});

Deno.test("readLine draws a tall input within the screen and leaves all of it behind when done", async () => {
  const lines = Array.from({ length: 8 }, (_, index) => `row ${index + 1}`);
  const tty = new FakeTty(20, 5);
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> ", continuationPrompt: ". " });
  tty.send(lines.join("\x1b\r"), UP, UP);
  await tty.idle();
  // The cursor's row (row 6) is on the screen, and nothing was drawn past it.
  ok(tty.screen.visible.includes(". row 6"), tty.screen.visible.join("|"));
  tty.send("\r");
  deepEqual(await reading, line(lines.join("\n")));
  ok(tty.screen.text.endsWith(lines.map((text, index) => `${index === 0 ? ">" : "."} ${text}`).join("\n")));
});

Deno.test("readLine redraws at the new width after a resize", async () => {
  const tty = new FakeTty(20, 12);
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> " });
  tty.send("abcdefghijklmno");
  await tty.idle();
  deepEqual(tty.screen.visible.slice(0, 2), ["> abcdefghijklmno", ""]);
  const writes = tty.written.length;
  tty.resize(10, 12);
  // The resize wakes the waiting read rather than ending it, so wait for the redraw itself.
  while (tty.written.length === writes) await new Promise((resolve) => setTimeout(resolve, 5));
  deepEqual(tty.screen.visible.slice(0, 3), ["> abcdefgh", "ijklmno", ""]);
  tty.send("\r");
  deepEqual(await reading, line("abcdefghijklmno"));
});

Deno.test("readLine clears the screen on Ctrl+L and draws the input at the top", async () => {
  const tty = new FakeTty(20, 6);
  tty.screen.write("old output\r\nmore\r\n");
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> " });
  tty.send("abc", "\x0c");
  await tty.idle();
  deepEqual(tty.screen.visible.slice(0, 2), ["> abc", ""]);
  tty.send("\r");
  deepEqual(await reading, line("abc"));
});

Deno.test("readLine starts from the initial text it is given", async () => {
  const { result, tty } = await edit(["!", "\r"], { initialText: "draft\nback" });
  deepEqual(result, line("draft\nback!"));
  equal(tty.screen.text, "> draft\n. back!");
});

Deno.test("readLine rejects with the abort reason and moves below the input", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal();
  const controller = new AbortController();
  const reading = readLine({ terminal, prompt: "> ", signal: controller.signal });
  tty.send("typed");
  await tty.idle();
  controller.abort(new Error("session closed"));
  await rejects(reading, /session closed/);
  equal(tty.screen.text, "> typed");
  deepEqual([tty.screen.row, tty.screen.column], [1, 0]);
});

/** A workspace with a few files for `@path` completion. */
async function workspace(): Promise<{ root: string } & AsyncDisposable> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-editor-" }));
  await Deno.mkdir(join(root, "src", "lib"), { recursive: true });
  await Deno.mkdir(join(root, "docs"));
  for (const file of ["src/main.ts", "src/mod.ts", "src/lib/util.ts", "README.md", "docs/guide.md", ".env"]) {
    await Deno.writeTextFile(join(root, file), "");
  }
  return { root, [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }) };
}

Deno.test("readLine completes a unique @path on Tab, a file with a space after it", async () => {
  await using space = await workspace();
  const complete = workspacePathCompleter(space.root);
  deepEqual(
    (await edit(["read @RE", "\t", "please", "\r"], { complete })).result,
    line("read @README.md please", ["README.md"]),
  );
  deepEqual(
    (await edit(["@src/ma", "\t", "\r"], { complete })).result,
    line("@src/main.ts ", ["src/main.ts"]),
  );
});

Deno.test("readLine completes a folder with a trailing slash and goes on into it", async () => {
  await using space = await workspace();
  const complete = workspacePathCompleter(space.root);
  const { result } = await edit(["@sr", "\t", "l", "\t", "u", "\t", "\r"], { complete });
  deepEqual(result, line("@src/lib/util.ts ", ["src/lib/util.ts"]));
});

Deno.test("readLine lists several candidates under the input and completes their common start", async () => {
  await using space = await workspace();
  const complete = workspacePathCompleter(space.root);
  const tty = new FakeTty(40, 12);
  await using terminal = tty.terminal();
  const reading = readLine({ terminal, prompt: "> ", complete });
  tty.send("see @src/", "\t");
  await tty.idle();
  deepEqual(tty.screen.visible.slice(0, 3), ["> see @src/", "lib/     main.ts  mod.ts", ""]);
  deepEqual([tty.screen.row, tty.screen.column], [0, 11]);
  tty.send("m", "\t");
  await tty.idle();
  deepEqual(tty.screen.visible.slice(0, 2), ["> see @src/m", "main.ts  mod.ts"]);
  tty.send("o", "\t", "\r");
  deepEqual(await reading, line("see @src/mod.ts ", ["src/mod.ts"]));
  equal(tty.screen.text, "> see @src/mod.ts");
});

Deno.test("readLine offers hidden files only for a leading dot", async () => {
  await using space = await workspace();
  const complete = workspacePathCompleter(space.root);
  deepEqual((await edit(["@.e", "\t", "\r"], { complete })).result, line("@.env ", [".env"]));
  deepEqual((await edit(["@", "\t", "\r"], { complete })).result, line("@"));
});

Deno.test("readLine returns the @paths that exist as attachments, once each, without trailing punctuation", async () => {
  await using space = await workspace();
  const complete = workspacePathCompleter(space.root);
  const typed =
    "compare @src/main.ts, @docs/ and @missing.ts with @README.md. Again @src/main.ts; mail a@src/mod.ts";
  const { result } = await edit([typed, "\r"], { complete });
  deepEqual(result, line(typed, ["src/main.ts", "docs/", "README.md"]));
});

Deno.test("readLine does not take @paths inside a collapsed paste as attachments", async () => {
  await using space = await workspace();
  const complete = workspacePathCompleter(space.root);
  const pasted = "@README.md\n".repeat(20);
  const { result } = await edit([`${PASTE_START}${pasted}${PASTE_END}`, "\r"], { complete });
  deepEqual(result, line(pasted));
});

Deno.test("readLine leaves Tab without effect outside an @path or without a completer", async () => {
  deepEqual((await edit(["a", "\t", "b", "\r"])).result, line("ab"));
  deepEqual((await edit(["@RE", "\t", "\r"])).result, line("@RE"));
});

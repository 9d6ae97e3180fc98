import { deepEqual, equal } from "node:assert/strict";
import {
  describeKey,
  KeyDecoder,
  type KeyEvent,
  type KeyName,
  type KeyPress,
} from "../../../src/cli/interactive/keys.ts";

function key(name: KeyName, modifiers: string = ""): KeyPress {
  return {
    type: "key",
    name,
    ctrl: modifiers.includes("ctrl"),
    alt: modifiers.includes("alt"),
    shift: modifiers.includes("shift"),
  };
}

function text(value: string): KeyEvent {
  return { type: "text", text: value };
}

function paste(value: string): KeyEvent {
  return { type: "paste", text: value };
}

function unknown(sequence: string): KeyEvent {
  return { type: "unknown", sequence };
}

/** Bytes of a string: UTF-8, so escapes such as "\x1b" are the byte they name. */
function utf8(value: string): Uint8Array {
  return new TextEncoder().encode(value);
}

/** Decodes chunks as they would arrive, then flushes as the reader does after its timeout. */
function decode(...chunks: Uint8Array[]): KeyEvent[] {
  const decoder = new KeyDecoder();
  const events = chunks.flatMap((chunk) => decoder.feed(chunk));
  return merged([...events, ...decoder.flush()]);
}

/** Joins adjacent text events, which depend on how input was chunked, not on what was typed. */
function merged(events: KeyEvent[]): KeyEvent[] {
  const result: KeyEvent[] = [];
  for (const event of events) {
    const last = result.at(-1);
    if (event.type === "text" && last?.type === "text") {
      result[result.length - 1] = text(last.text + event.text);
    } else result.push(event);
  }
  return result;
}

/** Input in one chunk and what it decodes to. */
const CASES: [string, string | Uint8Array, KeyEvent[]][] = [
  ["ASCII text", "hello, world", [text("hello, world")]],
  ["multi-byte text", "héllo 世界 🐱", [text("héllo 世界 🐱")]],
  ["Enter (CR)", "\r", [key("enter")]],
  ["LF as Ctrl+J", "\n", [key("j", "ctrl")]],
  ["Alt+Enter as ESC CR", "\x1b\r", [key("enter", "alt")]],
  ["Shift+Enter in the kitty protocol (CSI 13;2u)", "\x1b[13;2u", [key("enter", "shift")]],
  ["Shift+Enter in xterm modifyOtherKeys (CSI 27;2;13~)", "\x1b[27;2;13~", [key("enter", "shift")]],
  ["Alt+Enter in the kitty protocol", "\x1b[13;3u", [key("enter", "alt")]],
  ["Ctrl+Enter in the kitty protocol", "\x1b[13;5u", [key("enter", "ctrl")]],
  ["Backspace (DEL)", "\x7f", [key("backspace")]],
  ["Backspace (BS)", "\b", [key("backspace")]],
  ["Alt+Backspace", "\x1b\x7f", [key("backspace", "alt")]],
  ["Ctrl+Backspace in the kitty protocol", "\x1b[127;5u", [key("backspace", "ctrl")]],
  ["Delete", "\x1b[3~", [key("delete")]],
  ["Ctrl+Delete", "\x1b[3;5~", [key("delete", "ctrl")]],
  ["Insert", "\x1b[2~", [key("insert")]],
  ["Page Up and Down", "\x1b[5~\x1b[6~", [key("page-up"), key("page-down")]],
  ["arrows (CSI)", "\x1b[A\x1b[B\x1b[C\x1b[D", [key("up"), key("down"), key("right"), key("left")]],
  ["arrows (SS3, application mode)", "\x1bOA\x1bOB\x1bOC\x1bOD", [
    key("up"),
    key("down"),
    key("right"),
    key("left"),
  ]],
  ["Ctrl+Right", "\x1b[1;5C", [key("right", "ctrl")]],
  ["Alt+Left", "\x1b[1;3D", [key("left", "alt")]],
  ["Shift+Up", "\x1b[1;2A", [key("up", "shift")]],
  ["Ctrl+Alt+Shift+Left", "\x1b[1;8D", [key("left", "ctrl alt shift")]],
  ["Alt+Left as ESC ESC [ D", "\x1b\x1b[D", [key("left", "alt")]],
  ["Home and End (CSI H, F)", "\x1b[H\x1b[F", [key("home"), key("end")]],
  ["Home and End (SS3)", "\x1bOH\x1bOF", [key("home"), key("end")]],
  ["Home and End (1~ 4~)", "\x1b[1~\x1b[4~", [key("home"), key("end")]],
  ["Home and End (7~ 8~, rxvt)", "\x1b[7~\x1b[8~", [key("home"), key("end")]],
  ["keypad Enter (SS3 M)", "\x1bOM", [key("enter")]],
  ["Tab", "\t", [key("tab")]],
  ["Shift+Tab", "\x1b[Z", [key("tab", "shift")]],
  ["Ctrl+A E K U W L C D", "\x01\x05\x0b\x15\x17\x0c\x03\x04", [
    key("a", "ctrl"),
    key("e", "ctrl"),
    key("k", "ctrl"),
    key("u", "ctrl"),
    key("w", "ctrl"),
    key("l", "ctrl"),
    key("c", "ctrl"),
    key("d", "ctrl"),
  ]],
  ["Ctrl+Space", "\x00", [key("space", "ctrl")]],
  ["Alt+B and Alt+Shift+B", "\x1bb\x1bB", [key("b", "alt"), key("b", "alt shift")]],
  ["Alt+Ctrl+W", "\x1b\x17", [key("w", "ctrl alt")]],
  ["Ctrl+C in the kitty protocol", "\x1b[99;5u", [key("c", "ctrl")]],
  ["Esc in the kitty protocol", "\x1b[27u", [key("escape")]],
  ["a kitty code point with sub-parameters", "\x1b[97:65;5u", [key("a", "ctrl")]],
  ["a shifted character in the kitty protocol is text", "\x1b[65;2u", [text("A")]],
  ["text around keys", "ab\x1b[Dc\r", [text("ab"), key("left"), text("c"), key("enter")]],
  ["an unknown CSI sequence", "\x1b[99X", [unknown("\x1b[99X")]],
  ["a private CSI reply (device attributes)", "\x1b[?1;2c", [unknown("\x1b[?1;2c")]],
  ["F1 (SS3 P), which the decoder does not name", "\x1bOP", [unknown("\x1bOP")]],
  ["Alt with a symbol", "\x1b.", [unknown("\x1b.")]],
  ["Ctrl+\\", "\x1c", [unknown("\x1c")]],
  ["a CSI sequence broken by a control byte", "\x1b[1;\x03", [unknown("\x1b[1;"), key("c", "ctrl")]],
  ["bracketed paste", "\x1b[200~hello\x1b[201~", [paste("hello")]],
  ["bracketed paste with CR LF and CR line ends", "\x1b[200~one\r\ntwo\rthree\nfour\x1b[201~", [
    paste("one\ntwo\nthree\nfour"),
  ]],
  ["bracketed paste keeps escapes and controls inside", "\x1b[200~\x1b[31mred\x1b[0m\x03\x1b[201~", [
    paste("\x1b[31mred\x1b[0m\x03"),
  ]],
  ["bracketed paste of multi-byte text", "\x1b[200~世界🐱\x1b[201~", [paste("世界🐱")]],
  ["an empty bracketed paste", "\x1b[200~\x1b[201~", [paste("")]],
  ["keys before and after a paste", "a\x1b[200~b\rc\x1b[201~\r", [text("a"), paste("b\nc"), key("enter")]],
  ["a stray paste end", "\x1b[201~x", [text("x")]],
  ["an invalid byte", new Uint8Array([0x61, 0xff, 0x62]), [text("a\ufffdb")]],
  ["a lead byte without its continuation", new Uint8Array([0xc3, 0x28]), [text("\ufffd(")]],
  ["an overlong encoding", new Uint8Array([0xe0, 0x80, 0xaf]), [text("\ufffd\ufffd\ufffd")]],
];

Deno.test("KeyDecoder decodes each kind of input in one chunk", async (t) => {
  for (const [name, input, expected] of CASES) {
    await t.step(name, () => {
      deepEqual(decode(typeof input === "string" ? utf8(input) : input), expected);
    });
  }
});

Deno.test("KeyDecoder decodes the same events wherever the input is split", async (t) => {
  for (const [name, input, expected] of CASES) {
    const bytes = typeof input === "string" ? utf8(input) : input;
    await t.step(name, () => {
      for (let split = 1; split < bytes.length; split++) {
        deepEqual(decode(bytes.slice(0, split), bytes.slice(split)), expected, `split at byte ${split}`);
      }
      deepEqual(decode(...[...bytes].map((byte) => new Uint8Array([byte]))), expected, "one byte at a time");
    });
  }
});

Deno.test("KeyDecoder holds a lone ESC until flushed, then it is Esc", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed(utf8("\x1b")), []);
  equal(decoder.pending, "sequence");
  deepEqual(decoder.flush(), [key("escape")]);
  equal(decoder.pending, "none");
});

Deno.test("KeyDecoder reads ESC followed by the rest of a sequence in a later chunk as one key", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed(utf8("\x1b")), []);
  deepEqual(decoder.feed(utf8("[A")), [key("up")]);
});

Deno.test("KeyDecoder reads what follows a flushed ESC as text", () => {
  const decoder = new KeyDecoder();
  decoder.feed(utf8("\x1b"));
  deepEqual(decoder.flush(), [key("escape")]);
  deepEqual(decoder.feed(utf8("[A")), [text("[A")]);
});

Deno.test("KeyDecoder gives its best reading of a partial sequence when flushed", async (t) => {
  const cases: [string, string, KeyEvent[]][] = [
    ["ESC [ alone", "\x1b[", [unknown("\x1b[")]],
    ["ESC [ 1 ; 5 without its final byte", "\x1b[1;5", [unknown("\x1b[1;5")]],
    ["ESC O alone is Alt+Shift+O", "\x1bO", [key("o", "alt shift")]],
    ["two ESCs are two Escs", "\x1b\x1b", [key("escape"), key("escape")]],
  ];
  for (const [name, input, expected] of cases) {
    await t.step(name, () => {
      const decoder = new KeyDecoder();
      deepEqual(decoder.feed(utf8(input)), []);
      deepEqual(decoder.flush(), expected);
    });
  }
});

Deno.test("KeyDecoder gives U+FFFD for a character cut off when flushed", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed(new Uint8Array([0x61, 0xe4, 0xb8])), [text("a")]);
  equal(decoder.pending, "sequence");
  deepEqual(decoder.flush(), [text("\ufffd")]);
});

Deno.test("KeyDecoder joins a character split across chunks", () => {
  const decoder = new KeyDecoder();
  const cat = utf8("🐱");
  deepEqual(decoder.feed(cat.slice(0, 1)), []);
  deepEqual(decoder.feed(cat.slice(1, 3)), []);
  deepEqual(decoder.feed(cat.slice(3)), [text("🐱")]);
});

Deno.test("KeyDecoder keeps a paste open across chunks and returns it as one event", () => {
  const decoder = new KeyDecoder();
  const lines = Array.from({ length: 500 }, (_, index) => `line ${index} ${"x".repeat(index % 70)}`);
  const bytes = utf8(`\x1b[200~${lines.join("\r")}\x1b[201~`);
  const events: KeyEvent[] = [];
  for (let offset = 0; offset < bytes.length; offset += 997) {
    events.push(...decoder.feed(bytes.slice(offset, offset + 997)));
    if (offset + 997 < bytes.length) equal(decoder.pending, "paste");
  }
  deepEqual(events, [paste(lines.join("\n"))]);
  equal(decoder.pending, "none");
});

Deno.test("KeyDecoder does not end a paste at a partial end marker", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed(utf8("\x1b[200~a\x1b[20")), []);
  deepEqual(decoder.feed(utf8("0~b")), []);
  deepEqual(decoder.feed(utf8("\x1b[201~")), [paste("a\x1b[200~b")]);
});

Deno.test("KeyDecoder ends an open paste with what arrived when flushed", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed(utf8("\x1b[200~partial")), []);
  equal(decoder.pending, "paste");
  deepEqual(decoder.flush(), [paste("partial")]);
  equal(decoder.pending, "none");
});

Deno.test("KeyDecoder drops an unfinished sequence longer than any key", () => {
  const decoder = new KeyDecoder();
  const long = `\x1b[${"1;".repeat(20)}`;
  deepEqual(decoder.feed(utf8(long)), [unknown(long)]);
  equal(decoder.pending, "none");
});

Deno.test("describeKey names a key with its modifiers in a fixed order", () => {
  equal(describeKey(key("a", "ctrl")), "ctrl-a");
  equal(describeKey(key("enter", "shift")), "shift-enter");
  equal(describeKey(key("left", "shift alt ctrl")), "ctrl-alt-shift-left");
  equal(describeKey(key("up")), "up");
});

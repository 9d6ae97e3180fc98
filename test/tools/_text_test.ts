import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  BINARY_SNIFF_BYTES,
  codePointLabel,
  countLines,
  decodeFile,
  decodeLegacy,
  decodeText,
  detectLineEnding,
  encodeText,
  encodeWindows1252,
  firstInvalidUtf8,
  guessLegacyEncoding,
  hasUtf8Bom,
  isBinaryPath,
  looksBinary,
  MAX_LINE_CHARACTERS,
  numbered,
  splitLines,
  utf16Bom,
  withLineEnding,
} from "../../src/tools/_text.ts";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

Deno.test("looksBinary finds a NUL byte in the first 8 KiB only, and treats a UTF-16 BOM as text", () => {
  assert(looksBinary(bytes(0x41, 0x00, 0x42)));
  assert(!looksBinary(utf8("plain text\n")));
  assert(!looksBinary(new Uint8Array(0)));
  const lateNul = new Uint8Array(BINARY_SNIFF_BYTES + 10).fill(0x41);
  lateNul[BINARY_SNIFF_BYTES + 5] = 0;
  assert(!looksBinary(lateNul));
  lateNul[BINARY_SNIFF_BYTES - 1] = 0;
  assert(looksBinary(lateNul));
  assert(!looksBinary(bytes(0xff, 0xfe, 0x41, 0x00)));
  assert(!looksBinary(bytes(0xfe, 0xff, 0x00, 0x41)));
});

Deno.test("isBinaryPath knows binary extensions, case-insensitively, and ignores dotfiles and text names", () => {
  for (
    const name of ["a.png", "/ws/IMG.JPG", "lib.so", "x.tar.gz", "app.wasm", "doc.pdf", "f.woff2", "m.pyc"]
  ) {
    assert(isBinaryPath(name), name);
  }
  for (
    const name of ["a.ts", "Makefile", ".png", "/ws/src/main.rs", "notes.txt", "data.json", "dir.png/file.ts"]
  ) {
    assert(!isBinaryPath(name), name);
  }
});

Deno.test("decodeText decodes UTF-8 and reports no BOM", () => {
  assertEquals(decodeText(utf8("héllo\n")), {
    ok: true,
    text: "héllo\n",
    encoding: "utf-8",
    bom: false,
    lineEnding: "\n",
  });
});

Deno.test("decodeText strips a UTF-8 BOM and records it", () => {
  const result = decodeText(bytes(0xef, 0xbb, 0xbf, 0x61, 0x0d, 0x0a));
  assertEquals(result, { ok: true, text: "a\r\n", encoding: "utf-8", bom: true, lineEnding: "\r\n" });
  assert(hasUtf8Bom(bytes(0xef, 0xbb, 0xbf)));
  assert(!hasUtf8Bom(utf8("abc")));
});

Deno.test("decodeText decodes UTF-16 LE and BE with a BOM", () => {
  assertEquals(decodeText(bytes(0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00, 0x0a, 0x00)), {
    ok: true,
    text: "hé\n",
    encoding: "utf-16le",
    bom: true,
    lineEnding: "\n",
  });
  assertEquals(decodeText(bytes(0xfe, 0xff, 0x00, 0x68, 0x00, 0xe9)), {
    ok: true,
    text: "hé",
    encoding: "utf-16be",
    bom: true,
    lineEnding: "\n",
  });
  assertEquals(decodeText(bytes(0xff, 0xfe, 0x00, 0xd8, 0x41, 0x00)), {
    ok: false,
    reason: "invalid-utf-16",
    encoding: "utf-16le",
  });
});

Deno.test("decodeText reports invalid UTF-8 with its offset and the legacy encoding it looks like", () => {
  // "café" in Latin-1, then a Windows-1252 curly quote.
  assertEquals(decodeText(bytes(0x63, 0x61, 0x66, 0xe9)), {
    ok: false,
    reason: "invalid-utf-8",
    offset: 3,
    looksLike: "latin-1",
  });
  assertEquals(decodeText(bytes(0x93, 0x61, 0x94)), {
    ok: false,
    reason: "invalid-utf-8",
    offset: 0,
    looksLike: "windows-1252",
  });
  assertEquals(guessLegacyEncoding(bytes(0xe9, 0xe8)), "latin-1");
});

Deno.test("firstInvalidUtf8 rejects overlongs, surrogates and truncated sequences and accepts 4-byte ones", () => {
  assertEquals(firstInvalidUtf8(utf8("a€😀")), -1);
  assertEquals(firstInvalidUtf8(bytes(0x61, 0xc0, 0x80)), 1);
  assertEquals(firstInvalidUtf8(bytes(0xed, 0xa0, 0x80)), 0);
  assertEquals(firstInvalidUtf8(bytes(0x61, 0x62, 0xe2, 0x82)), 2);
  assertEquals(firstInvalidUtf8(bytes(0xf4, 0x90, 0x80, 0x80)), 0);
});

Deno.test("decodeLegacy and encodeWindows1252 round-trip every byte value", () => {
  const all = Uint8Array.from({ length: 256 }, (_, index) => index);
  const text = decodeLegacy(all);
  assertEquals(text.length, 256);
  assertEquals(text[0xe9], "é");
  assertEquals(text[0x80], "€");
  assertEquals(text[0x93], "\u201c");
  assertEquals(encodeWindows1252(text), all);
  assertEquals(encodeWindows1252("a→b"), { unrepresentable: 1 });
});

Deno.test("encodeText writes UTF-8 with or without BOM, UTF-16 LE/BE with BOM, and Windows-1252", () => {
  assertEquals(encodeText("hé", { encoding: "utf-8", bom: false }), { ok: true, bytes: utf8("hé") });
  assertEquals(encodeText("a", { encoding: "utf-8", bom: true }), {
    ok: true,
    bytes: bytes(0xef, 0xbb, 0xbf, 0x61),
  });
  assertEquals(encodeText("hé", { encoding: "utf-16le", bom: true }), {
    ok: true,
    bytes: bytes(0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00),
  });
  assertEquals(encodeText("hé", { encoding: "utf-16be", bom: true }), {
    ok: true,
    bytes: bytes(0xfe, 0xff, 0x00, 0x68, 0x00, 0xe9),
  });
  assertEquals(encodeText("café€", { encoding: "windows-1252", bom: false }), {
    ok: true,
    bytes: bytes(0x63, 0x61, 0x66, 0xe9, 0x80),
  });
  assertEquals(encodeText("x→", { encoding: "windows-1252", bom: false }), {
    ok: false,
    index: 1,
    character: "→",
  });
});

Deno.test("encodeText refuses a lone surrogate in UTF-8 instead of writing U+FFFD", () => {
  assertEquals(encodeText("a\uD800b", { encoding: "utf-8", bom: false }), {
    ok: false,
    index: 1,
    character: "\uD800",
  });
  assertEquals(encodeText("😀", { encoding: "utf-8", bom: false }).ok, true, "a surrogate pair is fine");
});

Deno.test("encodeText refuses a lone surrogate in UTF-16 too: the file could not be decoded again", () => {
  for (const encoding of ["utf-16le", "utf-16be"] as const) {
    assertEquals(encodeText("a\uDC00b", { encoding, bom: true }), {
      ok: false,
      index: 1,
      character: "\uDC00",
    });
    assertEquals(encodeText("😀", { encoding, bom: true }).ok, true, "a surrogate pair is fine");
  }
});

Deno.test("detectLineEnding picks CRLF when CRLF breaks are at least as many as bare LF breaks", () => {
  assertEquals(detectLineEnding("a\nb\n"), "\n");
  assertEquals(detectLineEnding("a\r\nb\r\n"), "\r\n");
  assertEquals(detectLineEnding("a\r\nb\r\nc\n"), "\r\n");
  assertEquals(detectLineEnding("a\r\nb\nc\n"), "\n");
  assertEquals(detectLineEnding("no break"), "\n");
});

Deno.test("withLineEnding rewrites every break, mixed or not", () => {
  assertEquals(withLineEnding("a\nb\r\nc", "\r\n"), "a\r\nb\r\nc");
  assertEquals(withLineEnding("a\r\nb\nc\r\n", "\n"), "a\nb\nc\n");
});

Deno.test("splitLines adds no phantom line after a final break and drops the \\r of CRLF", () => {
  assertEquals(splitLines(""), []);
  assertEquals(splitLines("a"), ["a"]);
  assertEquals(splitLines("a\n"), ["a"]);
  assertEquals(splitLines("a\n\n"), ["a", ""]);
  assertEquals(splitLines("a\r\n\tb\r\n"), ["a", "\tb"]);
  for (const text of ["", "a", "a\n", "a\n\n", "a\r\nb", "\n"]) {
    assertEquals(countLines(text), splitLines(text).length);
  }
});

Deno.test("utf16Bom names the UTF-16 byte order of a BOM and nothing else", () => {
  assertEquals(utf16Bom(bytes(0xff, 0xfe, 0x41, 0x00)), "utf-16le");
  assertEquals(utf16Bom(bytes(0xfe, 0xff, 0x00, 0x41)), "utf-16be");
  assertEquals(utf16Bom(utf8("\uFEFFa")), null);
  assertEquals(utf16Bom(bytes(0xff)), null);
  assertEquals(utf16Bom(new Uint8Array(0)), null);
});

Deno.test("decodeFile keeps valid text as decodeText does and decodes invalid UTF-8 as Windows-1252", () => {
  assertEquals(decodeFile(utf8("a\r\nb\r\n")), {
    ok: true,
    text: "a\r\nb\r\n",
    format: { encoding: "utf-8", bom: false, lineEnding: "\r\n" },
    invalidUtf8: null,
  });
  assertEquals(decodeFile(bytes(0x41, 0x93, 0x42, 0x0d, 0x0a)), {
    ok: true,
    text: "A\u201cB\r\n",
    format: { encoding: "windows-1252", bom: false, lineEnding: "\r\n" },
    invalidUtf8: { offset: 1, looksLike: "windows-1252" },
  });
  assertEquals(decodeFile(bytes(0xe9, 0x0a)), {
    ok: true,
    text: "\u00e9\n",
    format: { encoding: "windows-1252", bom: false, lineEnding: "\n" },
    invalidUtf8: { offset: 0, looksLike: "latin-1" },
  });
  assertEquals(decodeFile(bytes(0xff, 0xfe, 0x00, 0xdc)), {
    ok: false,
    reason: "invalid-utf-16",
    encoding: "utf-16le",
  });
});

Deno.test("numbered shows a line as ReadFile does and cuts it past the limit with a marker", () => {
  assertEquals(numbered(7, "\tconst a = 1;"), "7\t\tconst a = 1;");
  assertEquals(numbered(1, "x".repeat(MAX_LINE_CHARACTERS)), `1\t${"x".repeat(MAX_LINE_CHARACTERS)}`);
  const long = "y".repeat(MAX_LINE_CHARACTERS + 14);
  assertEquals(
    numbered(3, long),
    `3\t${
      "y".repeat(MAX_LINE_CHARACTERS)
    }… [line cut: ${long.length} characters, first ${MAX_LINE_CHARACTERS} shown]`,
  );
});

Deno.test("codePointLabel pads to four hex digits and shows astral characters whole", () => {
  assertEquals(codePointLabel("\u00e9"), "U+00E9");
  assertEquals(codePointLabel("\uDC80"), "U+DC80");
  assertEquals(codePointLabel("😀"), "U+1F600");
});

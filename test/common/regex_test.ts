import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { compileSearchPattern, compileTree, MAX_PATTERN_UNITS } from "../../src/common/regex.ts";

/** The native regex Grep used before the rewrite: `u` only when the pattern needs it. */
function nativeRegex(pattern: string, ignoreCase: boolean): RegExp {
  const flags = ignoreCase ? "gi" : "g";
  if (/\\[pP]\{|\\u\{/.test(pattern)) return new RegExp(pattern, `${flags}u`);
  try {
    return new RegExp(pattern, flags);
  } catch {
    return new RegExp(pattern, `${flags}u`);
  }
}

function firstMatch(regex: RegExp, text: string): [number, string] | null {
  regex.lastIndex = 0;
  const found = regex.exec(text);
  return found === null ? null : [found.index, found[0]];
}

/**
 * Fails unless the rewritten pattern finds the same first match as V8 on every input: the same position,
 * and with `sameText` the same text. Expanding "x{1,3}" into "x(?:x(?:x)?)?" keeps what matches and where,
 * but when x can match empty the engine's empty-iteration rule may pick a longer or shorter match; Grep
 * only uses whether and where a line matches.
 */
function assertSameMatches(
  pattern: string,
  inputs: readonly string[],
  ignoreCase: boolean,
  sameText = true,
): void {
  const compiled = compileSearchPattern(pattern, { ignoreCase, flags: "g" });
  ok(compiled.ok, `${pattern}: ${compiled.ok ? "" : compiled.message}`);
  const native = nativeRegex(pattern, ignoreCase);
  for (const input of inputs) {
    const ours = firstMatch(compiled.regex, input);
    const theirs = firstMatch(native, input);
    deepStrictEqual(
      sameText ? ours : ours?.[0] ?? null,
      sameText ? theirs : theirs?.[0] ?? null,
      `${JSON.stringify(pattern)}${ignoreCase ? " (i)" : ""} on ${
        JSON.stringify(input)
      }: ${compiled.regex.source}`,
    );
  }
}

const INPUTS = [
  "",
  "abc",
  "ABC",
  "aaaa!",
  "foo = bar",
  "hello WORLD",
  "192.168.1.1",
  "color colour",
  "café ☕",
  "a.b-c_d",
  "{,3} a{,3} } ]",
  "x\ny",
  "\x01\x08\x11\\c",
  "8 9 \0",
  "K \u212a ſ s S ß ẞ",
  "İ i ı I",
  "ǅ ǆ Ǆ",
  "Σ σ ς",
  "tab\there",
  "x@y.z",
];

Deno.test("compileSearchPattern matches exactly what V8 matches, with and without case folding", async (t) => {
  const groups: Record<string, string[]> = {
    "literals and escapes": ["abc", "a\\.b", "\\x41", "\\u00e9", "\\t", "\\n", "\\0", "\\cJ", "\\\\c", "\\-"],
    "legacy syntax without u": ["\\101", "\\8", "\\1", "a{,3}", "}", "]", "\\c1", "[\\c1]", "[\\w-z]", "\\k"],
    "classes": ["[a-z]+", "[^abc]", "[^]", "[]", "[\\b]", "[.]", "[\\d\\s]", "[^\\W]", "[--z]", "[a-]"],
    "escapes for sets": ["\\d+", "\\D", "\\w+\\s*=", "\\W", "\\s", "\\S+@\\S+", "."],
    "quantifiers": ["x{3}", "a{2,}", "a{1,3}?b", "(?:ab|cd){2,3}", "a*?b", "a??", "colou?r", "(a+)+$"],
    "counted repetition beyond 16": ["[a-z]{2,20}", "a{0,30}b{0,30}", "\\d{1,3}(?:\\.\\d{1,3}){3}"],
    "assertions": ["^$", "^abc", "c$", "\\bfoo\\b", "\\Bb", "^\\s*$"],
    "groups": ["(?<name>ab)c", "(a)(b)", "(?:a|b|)c", "a|b|c"],
    "modifiers": ["(?i:ab)c", "a(?-i:b)", "(?s:x.y)", "(?m:^a)"],
    "case-sensitive letters": ["k", "s", "ß", "İ", "ǅ", "σ", "K", "[k-s]", "[^k]"],
    "Unicode mode": ["\\p{Lu}", "\\P{L}+", "\\u{1F600}", "[\\u{1F600}-\\u{1F64F}]", "\\p{Script=Greek}+"],
  };
  for (const [name, patterns] of Object.entries(groups)) {
    await t.step(name, () => {
      for (const pattern of patterns) {
        assertSameMatches(pattern, INPUTS, false);
        assertSameMatches(pattern, INPUTS, true);
      }
    });
  }
});

Deno.test("compileSearchPattern keeps code points whole in Unicode mode, as the u flag does", () => {
  const astral = ["😀", "😀😂", "a😀b", "𐐀𐐨", "x\u{1F64F}y"];
  for (
    const pattern of ["^.$", "^.{3}$", "[^a]{2}", "\\u{1F600}+", "[😀-😂]", "[^\\u{1F600}]", "\\u{10428}"]
  ) {
    // "\u{…}" makes the pattern Unicode; "\p{L}" only to force the mode where needed.
    const unicodePattern = pattern.includes("\\u{") ? pattern : `(?:${pattern})|\\p{Co}`;
    assertSameMatches(unicodePattern, astral, false);
    assertSameMatches(unicodePattern, astral, true);
  }
});

Deno.test("compileSearchPattern treats characters above U+FFFF as having no Unicode property", () => {
  const property = compileSearchPattern("\\p{L}", { ignoreCase: false, flags: "" });
  const complement = compileSearchPattern("^\\P{L}$", { ignoreCase: false, flags: "" });
  ok(property.ok && complement.ok);
  equal(property.regex.test("𐐀"), false, "a Deseret letter is not found by \\p{L}");
  equal(complement.regex.test("𐐀"), true);
  equal(property.regex.test("é"), true);
});

Deno.test("compileSearchPattern agrees with V8 on random patterns (seeded)", () => {
  let state = 42;
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const atoms = [
    "a",
    "b",
    "A",
    "k",
    "s",
    "ß",
    "é",
    ".",
    "\\d",
    "\\w",
    "\\W",
    "\\s",
    "[a-c]",
    "[^a]",
    "\\b",
    "^",
    "$",
  ];
  const quantifiers = ["*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "*?", "+?", "{1,2}?"];
  const generate = (depth: number): string => {
    const roll = random();
    if (depth > 3 || roll < 0.35) return pick(atoms);
    if (roll < 0.55) return generate(depth + 1) + generate(depth + 1);
    if (roll < 0.65) return `${generate(depth + 1)}|${generate(depth + 1)}`;
    if (roll < 0.75) return `(${generate(depth + 1)})`;
    return `(?:${generate(depth + 1)})${pick(quantifiers)}`;
  };
  const characters = ["a", "b", "A", "k", "K", "s", "S", "ſ", "ß", "é", "É", " ", "\n", "-", "1"];
  for (let round = 0; round < 300; round++) {
    const pattern = generate(0);
    const inputs = Array.from({ length: 12 }, () => {
      let text = "";
      for (let length = Math.floor(random() * 8); length > 0; length--) text += pick(characters);
      return text;
    });
    assertSameMatches(pattern, inputs, round % 2 === 0, false);
  }
});

Deno.test("compileSearchPattern refuses lookarounds and backreferences with a message the model can act on", async (t) => {
  const cases: [string, string][] = [
    ["foo(?=bar)", 'lookahead "(?="'],
    ["foo(?!bar)", 'lookahead "(?!"'],
    ["(?<=a)b", 'lookbehind "(?<="'],
    ["(?<!a)b", 'lookbehind "(?<!"'],
    ["(a)\\1", 'backreference "\\1"'],
    ["(?<q>a)\\k<q>", 'backreference "\\k<q>"'],
  ];
  for (const [pattern, construct] of cases) {
    await t.step(pattern, () => {
      const compiled = compileSearchPattern(pattern, { ignoreCase: false, flags: "g" });
      ok(!compiled.ok);
      equal(
        compiled.message,
        `Cannot search with pattern "${pattern}": ${construct} is not supported, because every search must ` +
          `finish in linear time; rewrite the pattern without it, or use Bash with "grep -P"`,
      );
    });
  }
});

Deno.test("compileSearchPattern refuses the (?-m:) modifier: Grep's anchors are per line", () => {
  const compiled = compileSearchPattern("(?-m:^a)", { ignoreCase: false, flags: "g" });
  ok(!compiled.ok);
  match(compiled.message, /the modifier "\(\?-m:" is not supported, because "\^" and "\$" always match/);
});

Deno.test("compileSearchPattern refuses a pattern too large once expanded, and reports invalid syntax", () => {
  const large = compileSearchPattern("(?:(?:ab){60}){60}", { ignoreCase: false, flags: "g" });
  ok(!large.ok);
  match(large.message, new RegExp(`too large once expanded \\(more than ${MAX_PATTERN_UNITS} steps\\)`));
  const invalid = compileSearchPattern("foo(", { ignoreCase: false, flags: "g" });
  ok(!invalid.ok);
  match(invalid.message, /^Invalid pattern "foo\(": Invalid regular expression: .*Unterminated group/);
});

Deno.test("compileSearchPattern emits sources V8's linear engine accepts and finishes catastrophic patterns", () => {
  let linearFlag = true;
  try {
    new RegExp("", "l");
  } catch {
    linearFlag = false;
  }
  ok(linearFlag, "run the tests with --v8-flags=--enable-experimental-regexp-engine (deno task test:unit)");
  const hostile = "a".repeat(40) + "!";
  for (const pattern of ["(a+)+$", "(a|a)*$", "(?:a*)*b", "[a-z]{2,20}$", "^(\\w+\\s?)*$", "(x+x+)+y"]) {
    for (const ignoreCase of [false, true]) {
      const compiled = compileSearchPattern(pattern, { ignoreCase, flags: "g" });
      ok(compiled.ok, pattern);
      new RegExp(compiled.regex.source, "gl"); // throws if the linear engine cannot run it
      const started = performance.now();
      compiled.regex.lastIndex = 0;
      compiled.regex.exec(hostile);
      ok(performance.now() - started < 5_000, `${pattern} did not finish promptly`);
    }
  }
});

Deno.test("compileTree reports a tree larger than its limit instead of compiling it", () => {
  const tree = {
    type: "repeat",
    body: { type: "set", set: [0x61, 0x61] },
    min: 50,
    max: 50,
    greedy: true,
  } as const;
  const small = compileTree(tree, { flags: "", maxUnits: 10 });
  deepStrictEqual(small, { ok: false, reason: "too-large", units: 50 });
  const fits = compileTree(tree, { flags: "" });
  ok(fits.ok);
  equal(fits.regex.test("a".repeat(50)), true);
  equal(fits.regex.source, "a".repeat(50));
});

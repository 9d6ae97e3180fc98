/**
 * A position in a regex pattern and the readers of its characters and escapes, for `_regex_parse.ts`: one
 * character (a code point with `u`), `\d`-style and `\p{…}` sets, control, hex, Unicode and legacy octal
 * escapes, with the syntax V8 accepts with or without the `u` flag.
 *
 * @module
 */
import {
  type CharSet,
  complement,
  DIGITS,
  MAX_CODE_POINT,
  MAX_CODE_UNIT,
  propertySet,
  WHITE_SPACE,
  wordCharacters,
} from "./char_sets.ts";

const HEX = /^[0-9a-fA-F]+$/;

/** A pattern being read, and where. */
export class RegexCursor {
  readonly source: string;
  /** Whether the pattern is read with the `u` flag. */
  readonly unicode: boolean;
  /** The largest character: a code point with `u`, else a code unit. */
  readonly max: number;
  position = 0;

  /** A cursor at the start of `source`. */
  constructor(source: string, unicode: boolean) {
    this.source = source;
    this.unicode = unicode;
    this.max = unicode ? MAX_CODE_POINT : MAX_CODE_UNIT;
  }

  /** The character `offset` places ahead, or "" past the end. */
  peek(offset = 0): string {
    return this.source[this.position + offset] ?? "";
  }

  /** Whether the text at the position starts with `text`. */
  startsWith(text: string): boolean {
    return this.source.startsWith(text, this.position);
  }

  /** One character of the pattern: a code point with `u` (a surrogate pair is one), else a code unit. */
  sourceCharacter(): number {
    const code = this.unicode
      ? this.source.codePointAt(this.position)!
      : this.source.charCodeAt(this.position);
    this.position += code > 0xffff ? 2 : 1;
    return code;
  }

  /** \d \D \s \S \w \W, and \p{…} \P{…} with `u`; null for any other escape. Consumes what it reads. */
  setEscape(char: string, ignoreCase: boolean): CharSet | null {
    let set: CharSet;
    switch (char) {
      case "d":
      case "D":
        set = DIGITS;
        break;
      case "s":
      case "S":
        set = WHITE_SPACE;
        break;
      case "w":
      case "W":
        set = wordCharacters(this.unicode, ignoreCase);
        break;
      case "p":
      case "P": {
        if (!this.unicode) return null;
        const end = this.source.indexOf("}", this.position);
        const body = this.source.slice(this.position + 2, end);
        const property = propertySet(body);
        if (property === null) throw new SyntaxError(`Unknown property "${body}"`);
        this.position = end + 1;
        // propertySet covers the Basic Multilingual Plane only: above it, \p{…} matches no character and
        // \P{…} every character, as if they had no properties.
        return char === "p" ? property : complement(property, MAX_CODE_POINT);
      }
      default:
        return null;
    }
    this.position++;
    return char === char.toUpperCase() ? complement(set, this.max) : set;
  }

  /** Without `u`: "\8" and "\9" are the digits, "\1"–"\7" (and "\0" followed by a digit) octal escapes. */
  legacyEscape(): number {
    const first = this.peek();
    if (first === "8" || first === "9") {
      this.position++;
      return first.charCodeAt(0);
    }
    const maxDigits = first <= "3" ? 3 : 2;
    let value = 0;
    let digits = 0;
    while (digits < maxDigits && this.peek() >= "0" && this.peek() <= "7") {
      value = value * 8 + Number(this.peek());
      this.position++;
      digits++;
    }
    return value;
  }

  /**
   * A character escape after "\" (the "\" consumed): control characters, \0, \cX, \xHH, \uHHHH, \u{…}, or
   * the escaped character itself.
   */
  characterEscape(inClass: boolean): number {
    const char = this.peek();
    const simple: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
    if (char in simple) {
      this.position++;
      return simple[char]!;
    }
    if (char === "0" && !(this.peek(1) >= "0" && this.peek(1) <= "9")) {
      this.position++;
      return 0;
    }
    if (char === "0") return this.legacyEscape();
    if (char === "c") {
      const letter = this.peek(1);
      const valid = /^[A-Za-z]$/.test(letter) || (inClass && !this.unicode && /^[0-9_]$/.test(letter));
      if (valid) {
        this.position += 2;
        return letter.charCodeAt(0) % 32;
      }
      return 0x5c; // a lone "\c" without `u` is a backslash followed by "c" (parsed next)
    }
    if (char === "x") {
      const hex = this.source.slice(this.position + 1, this.position + 3);
      if (hex.length === 2 && HEX.test(hex)) {
        this.position += 3;
        return parseInt(hex, 16);
      }
    }
    if (char === "u") {
      const code = this.#unicodeEscape();
      if (code !== null) return code;
    }
    return this.sourceCharacter();
  }

  // "\u" followed by 4 hex digits, or with `u` by "{hex}" or a surrogate pair of escapes; null otherwise.
  #unicodeEscape(): number | null {
    if (this.unicode && this.peek(1) === "{") {
      const end = this.source.indexOf("}", this.position);
      const code = parseInt(this.source.slice(this.position + 2, end), 16);
      this.position = end + 1;
      return code;
    }
    const hex = this.source.slice(this.position + 1, this.position + 5);
    if (hex.length !== 4 || !HEX.test(hex)) return null;
    this.position += 5;
    const code = parseInt(hex, 16);
    if (!this.unicode || code < 0xd800 || code > 0xdbff || !this.startsWith("\\u")) return code;
    const trailHex = this.source.slice(this.position + 2, this.position + 6);
    const trail = trailHex.length === 4 && HEX.test(trailHex) ? parseInt(trailHex, 16) : -1;
    if (trail < 0xdc00 || trail > 0xdfff) return code;
    this.position += 6;
    return 0x10000 + ((code - 0xd800) << 10) + (trail - 0xdc00);
  }
}

/**
 * The characters mewcode never lets reach a terminal as they are, from the model, the API or a repository.
 *
 * @module
 */

/**
 * Code points a terminal draws as nothing, or acts on instead of drawing, as regex class ranges: C1 controls
 * (U+009B is CSI), the line and paragraph separators, the bidirectional controls, and the rest of Unicode's
 * default-ignorable code points, which hide text or make two different strings look alike (zero-width
 * characters, fillers, tag characters, variation selectors). The one list of what mewcode neutralises
 * wherever it shows text it did not write: `sanitize`, `terminalSafeJson`, the paths Glob and Grep show, the
 * git scan's warnings and the session list's lines.
 */
export const HIDDEN_RANGES = [
  "\\u0080-\\u009f", // C1 controls
  "\\u00ad", // soft hyphen
  "\\u034f", // combining grapheme joiner
  "\\u061c", // Arabic letter mark (bidirectional)
  "\\u115f\\u1160", // Hangul choseong and jungseong fillers
  "\\u17b4\\u17b5", // Khmer inherent vowels
  "\\u180b-\\u180f", // Mongolian free variation selectors and vowel separator
  "\\u200b-\\u200f", // zero-width space, non-joiner and joiner; left-to-right and right-to-left marks
  "\\u2028-\\u202e", // line and paragraph separators; bidirectional embeddings and overrides
  "\\u2060-\\u206f", // word joiner, invisible operators, bidirectional isolates, deprecated format controls
  "\\u2800", // braille pattern blank, drawn as a space
  "\\u3164", // Hangul filler
  "\\ufe00-\\ufe0f", // variation selectors (but see EMOJI_STYLE)
  "\\ufeff", // zero-width no-break space (byte order mark)
  "\\uffa0", // halfwidth Hangul filler
  "\\ufff0-\\ufff8", // reserved, default-ignorable
  "\\u{1bca0}-\\u{1bca3}", // shorthand format controls
  "\\u{1d173}-\\u{1d17a}", // musical symbol format controls
  "\\u{e0000}-\\u{e0fff}", // tag characters, variation selectors supplement, reserved
].join("");

/**
 * An emoji with its text (U+FE0E) or emoji (U+FE0F) presentation selector, which stays: "⚠️" and "❤️" are
 * common in model text; so does a keycap ("1️⃣": a digit, # or *, U+FE0F, U+20E3). Anywhere else a variation
 * selector only carries hidden data ("v1\ufe0f.txt" would pass for "v1.txt": `\p{Emoji}` holds the digits).
 */
export const EMOJI_STYLE = "(?:\\p{Extended_Pictographic}[\\ufe0e\\ufe0f]|[0-9#*]\\ufe0f\\u20e3)";

// DEL too: JSON.stringify leaves it as it is.
const JSON_HIDDEN = new RegExp(`(${EMOJI_STYLE})|[\\u007f${HIDDEN_RANGES}]`, "gu");

/** C0 controls, DEL and the characters of `HIDDEN_RANGES`, an emoji's presentation selector excepted. */
const ANY_HIDDEN = new RegExp(`(${EMOJI_STYLE})|[\\u0000-\\u001f\\u007f${HIDDEN_RANGES}]`, "gu");

/**
 * JSON text with every character a terminal may act on, reorder or hide escaped (`\u202e`, `\udb40\udc41`):
 * the same value for a parser, and nothing that changes what whoever reads it on a terminal sees. JSON.stringify
 * escapes C0 controls and lone surrogates itself, and these can appear only inside strings, where an escape
 * means the same character.
 */
export function escapeHiddenInJson(json: string): string {
  return json.replace(JSON_HIDDEN, (match: string, emoji: string | undefined) => emoji ?? jsonEscape(match));
}

/** Whether text holds a C0 control, DEL or a character of `HIDDEN_RANGES` (an emoji's selector excepted). */
export function hasHidden(text: string): boolean {
  ANY_HIDDEN.lastIndex = 0;
  for (const match of text.matchAll(ANY_HIDDEN)) if (match[1] === undefined) return true;
  return false;
}

/** Text with each C0 control, DEL and character of `HIDDEN_RANGES` written as `\uXXXX`, for one line. */
export function escapeHidden(text: string): string {
  return text.replace(ANY_HIDDEN, (match: string, emoji: string | undefined) => emoji ?? jsonEscape(match));
}

/** Text for one line: each C0 control, DEL and character of `HIDDEN_RANGES` becomes a space. */
export function blankHidden(text: string): string {
  return text.replace(ANY_HIDDEN, (_match: string, emoji: string | undefined) => emoji ?? " ");
}

// Every UTF-16 unit as \uXXXX: a character above U+FFFF becomes its surrogate pair, as JSON spells it.
function jsonEscape(char: string): string {
  let escaped = "";
  for (let index = 0; index < char.length; index++) {
    escaped += `\\u${char.charCodeAt(index).toString(16).padStart(4, "0")}`;
  }
  return escaped;
}

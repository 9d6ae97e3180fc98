/**
 * Keeps a provider's secrets out of what it reports. A server may repeat the Authorization header it got
 * in its error ("invalid key: Bearer sk-…"), fetch quotes a header value it rejects, and a base URL may
 * carry a password (`http://user:PASS@host`): each provider passes every error through
 * {@link redactError} before it leaves, so stderr, the json outputs and the transcript never see them.
 *
 * @module
 */

/** What a provider must not show. */
export interface Secrets {
  /** The API key, or null when none is sent (a placeholder is no secret). */
  apiKey: string | null;
}

/** What replaces the API key. */
export const API_KEY_MASK = "<the API key>";

/** The user-info of a URL anywhere in a text: scheme, `//`, user, `:`, password, `@`. */
const USER_INFO_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:"'<>]*):[^\s/?#"'<>]*@/gi;

/** `url` (or any text) with the password of each URL's user-info masked: `http://user:***@host`. */
export function redactUrl(url: string): string {
  return url.replace(USER_INFO_PASSWORD, "$1:***@");
}

/**
 * `text` with the API key replaced by `<the API key>` and URL passwords by `***`. A server may repeat the key
 * altered: in another case, broken across lines, with characters JSON-escaped (`\u0073k-…`), or inside
 * base64 (a Basic authorization of `user:KEY`); each form is masked.
 */
export function redactSecrets(text: string, secrets: Secrets): string {
  const key = secrets.apiKey?.trim() ?? "";
  if (key === "") return redactUrl(text);
  const pattern = keyPattern(key);
  const encodings = base64Forms(key);
  // Around the masks already there: a text redacted before (an error's message is, on its way out) keeps
  // them whole, where a short key could match inside one ("<the API <the API key>ey>").
  const parts = text.split(API_KEY_MASK).map((part) => {
    let redacted = part.replace(pattern, API_KEY_MASK);
    for (const encoded of encodings) redacted = redacted.replaceAll(encoded, API_KEY_MASK);
    return redacted;
  });
  return redactUrl(parts.join(API_KEY_MASK));
}

/**
 * The key, each character as itself or JSON-escaped (`\u00XX`), with line breaks, blanks or escaped line
 * breaks between them, in any case.
 */
function keyPattern(key: string): RegExp {
  const characters = [...key].map((character) => {
    const code = character.codePointAt(0)!;
    const literal = character.replace(/[\\^$.*+?()[\]{}|\/-]/g, "\\$&");
    return code < 0x80 ? `(?:${literal}|\\\\u00${code.toString(16).padStart(2, "0")})` : literal;
  });
  return new RegExp(characters.join("(?:\\s|\\\\[nrt])*"), "gi");
}

/**
 * What base64 of any text holding the key always holds, whatever the key's offset (three alignments): the
 * encoding of the key's characters, less the edges that depend on its neighbours. None for a key too short
 * to leave a distinctive run.
 */
function base64Forms(key: string): string[] {
  const bytes = new TextEncoder().encode(key);
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const encoded = btoa(String.fromCharCode(...padded));
    // Characters fully inside the key: from the first group boundary at or after it to the last before its end.
    const start = Math.ceil((offset * 4) / 3) + 2;
    const end = Math.floor(((offset + bytes.length) * 4) / 3) - 2;
    if (end - start >= 12) forms.push(encoded.slice(start, end));
  }
  return forms;
}

/**
 * `error`, with the message and stack of it and of each error in its `cause` chain redacted, in place:
 * the errors keep their class and fields (status, retryability) the retry policy and front ends read.
 */
export function redactError<T>(error: T, secrets: Secrets): T {
  let current: unknown = error;
  // A bound on the chain, which a careless `cause` could make circular.
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    current.message = redactSecrets(current.message, secrets);
    if (typeof current.stack === "string") current.stack = redactSecrets(current.stack, secrets);
    current = current.cause;
  }
  return error;
}

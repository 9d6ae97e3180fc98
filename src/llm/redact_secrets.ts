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

/** `text` with the API key replaced by `<the API key>` and URL passwords by `***`. */
export function redactSecrets(text: string, secrets: Secrets): string {
  const key = secrets.apiKey?.trim() ?? "";
  return redactUrl(key === "" ? text : text.replaceAll(key, API_KEY_MASK));
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

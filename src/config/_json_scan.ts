/**
 * A strict JSON scanner for messages about a file people edit: where its syntax breaks (line and column,
 * which V8's `JSON.parse` messages do not always give), and on which line each key and array element
 * starts, to point a schema error at its line. It checks syntax only; values come from `JSON.parse`.
 *
 * @module
 */

/** A key or array index on the way from the document's root to a value. */
export type JsonPathPart = string | number;

/** The scan of a document: the line of each value's key, or where the syntax breaks. */
export type JsonScan =
  | { ok: true; lines: JsonLines }
  | { ok: false; line: number; column: number; message: string };

/** Lines of the keys (or array elements) of a scanned document. */
export interface JsonLines {
  /** The 1-based line of the value at `path` (its key's line in an object), or of its nearest ancestor. */
  lineOf(path: readonly JsonPathPart[]): number | null;
}

const MAX_DEPTH = 64;

class ScanError extends Error {
  constructor(readonly offset: number, message: string) {
    super(message);
  }
}

/** A path as a settings file's reader writes it: `permissions.allow[2]`. */
function dottedPath(path: readonly JsonPathPart[]): string {
  return path.map((part, index) => typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`)
    .join("");
}

/**
 * Scans `text` as strict JSON (RFC 8259), recording the line of every key and array element. A key given
 * twice in one object is refused, as a syntax error is.
 */
export function scanJson(text: string): JsonScan {
  const lines = new Map<string, number>();
  const lineStarts = [0];
  for (let index = 0; index < text.length; index += 1) {
    if (text.charCodeAt(index) === 0x0a) lineStarts.push(index + 1);
  }
  const lineAt = (offset: number): number => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
  let at = 0;
  const skipSpace = (): void => {
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return;
      at += 1;
    }
  };
  const describeHere = (): string =>
    at >= text.length ? "the file ends" : `found ${JSON.stringify(text[at])}`;
  const expect = (what: string): never => {
    throw new ScanError(at, `expected ${what}, ${describeHere()}`);
  };
  const scanString = (): string => {
    const start = at;
    at += 1;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code === 0x22) {
        at += 1;
        return JSON.parse(text.slice(start, at)) as string;
      }
      if (code < 0x20) throw new ScanError(at, "a string contains a line break or control character");
      if (code === 0x5c) {
        const escape = text[at + 1];
        if (escape === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) {
            throw new ScanError(at, 'expected four hexadecimal digits after "\\u"');
          }
          at += 6;
          continue;
        }
        if (escape === undefined || !'"\\/bfnrt'.includes(escape)) {
          throw new ScanError(at, `invalid escape "\\${escape ?? ""}" in a string`);
        }
        at += 2;
        continue;
      }
      at += 1;
    }
    throw new ScanError(start, "a string is not closed");
  };
  const scanNumber = (): void => {
    const match = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(at, at + 400));
    if (match === null || match[0] === "" || match[0] === "-") expect("a value");
    at += match![0].length;
  };
  const scanValue = (path: JsonPathPart[], depth: number): void => {
    skipSpace();
    if (depth > MAX_DEPTH) throw new ScanError(at, `values are nested more than ${MAX_DEPTH} levels deep`);
    const char = text[at];
    if (char === "{") return scanObject(path, depth);
    if (char === "[") return scanArray(path, depth);
    if (char === '"') return void scanString();
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return;
      }
    }
    if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) return scanNumber();
    expect("a value");
  };
  const scanObject = (path: JsonPathPart[], depth: number): void => {
    at += 1;
    skipSpace();
    if (text[at] === "}") {
      at += 1;
      return;
    }
    const keysSeen = new Map<string, number>();
    while (true) {
      skipSpace();
      if (text[at] !== '"') expect("a property name in double quotes");
      const keyOffset = at;
      const keyLine = lineAt(at);
      const key = scanString();
      const childPath = [...path, key];
      // JSON.parse keeps the last of two equal keys: someone reading the file (a reviewer of a repository's
      // settings) may see only the first, which then does nothing.
      const first = keysSeen.get(key);
      if (first !== undefined) {
        throw new ScanError(
          keyOffset,
          `"${dottedPath(childPath)}" appears twice in one object (first on line ${first}); only the last ` +
            "would count, which someone reading the file may miss: keep one",
        );
      }
      keysSeen.set(key, keyLine);
      const id = JSON.stringify(childPath);
      if (!lines.has(id)) lines.set(id, keyLine);
      skipSpace();
      if (text[at] !== ":") expect('":" after a property name');
      at += 1;
      scanValue(childPath, depth + 1);
      skipSpace();
      if (text[at] === ",") {
        at += 1;
        continue;
      }
      if (text[at] === "}") {
        at += 1;
        return;
      }
      expect('"," or "}" after a property value');
    }
  };
  const scanArray = (path: JsonPathPart[], depth: number): void => {
    at += 1;
    skipSpace();
    if (text[at] === "]") {
      at += 1;
      return;
    }
    for (let index = 0;; index += 1) {
      skipSpace();
      const childPath = [...path, index];
      lines.set(JSON.stringify(childPath), lineAt(at));
      scanValue(childPath, depth + 1);
      skipSpace();
      if (text[at] === ",") {
        at += 1;
        continue;
      }
      if (text[at] === "]") {
        at += 1;
        return;
      }
      expect('"," or "]" after an array element');
    }
  };
  try {
    scanValue([], 0);
    skipSpace();
    if (at < text.length) throw new ScanError(at, `unexpected text after the end of the JSON value`);
  } catch (error) {
    if (!(error instanceof ScanError)) throw error;
    const line = lineAt(error.offset);
    return { ok: false, line, column: error.offset - lineStarts[line - 1]! + 1, message: error.message };
  }
  return {
    ok: true,
    lines: {
      lineOf(path) {
        for (let length = path.length; length > 0; length -= 1) {
          const line = lines.get(JSON.stringify(path.slice(0, length)));
          if (line !== undefined) return line;
        }
        return null;
      },
    },
  };
}

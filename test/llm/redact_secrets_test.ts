import { equal } from "node:assert/strict";
import { redactError, redactSecrets, redactUrl } from "../../src/llm/redact_secrets.ts";
import { ConnectionError } from "../../src/llm/errors.ts";

Deno.test("redactUrl masks the password of a URL's user-info and nothing else", async (t) => {
  const cases: [string, string][] = [
    ["http://user:PASS@host:8080/v1", "http://user:***@host:8080/v1"],
    ["https://user:p@ss@host/v1", "https://user:***@host/v1"],
    ["http://:PASS@host", "http://:***@host"],
    [
      'Cannot reach "http://u:PASS@127.0.0.1:1/v1": refused',
      'Cannot reach "http://u:***@127.0.0.1:1/v1": refused',
    ],
    ["http://user@host/v1", "http://user@host/v1"],
    ["http://host:8080/v1?to=a@b", "http://host:8080/v1?to=a@b"],
    ["https://api.openai.com/v1", "https://api.openai.com/v1"],
  ];
  for (const [url, shown] of cases) {
    await t.step(url, () => equal(redactUrl(url), shown));
  }
});

Deno.test("redactSecrets replaces the API key, and never a placeholder for none", () => {
  equal(
    redactSecrets("invalid key: Bearer sk-ant-SECRETKEY", { apiKey: " sk-ant-SECRETKEY\n" }),
    "invalid key: Bearer <the API key>",
  );
  equal(redactSecrets("model ollama not found", { apiKey: null }), "model ollama not found");
});

Deno.test("redactSecrets leaves the masks of a text redacted before whole, whatever the key", () => {
  for (const key of ["k", "the", "API key", "<", "sk-ant-key"]) {
    const once = redactSecrets(`Bearer ${key} (sent ${key})`, { apiKey: key });
    equal(once, "Bearer <the API key> (sent <the API key>)", key);
    equal(redactSecrets(once, { apiKey: key }), once, key);
  }
  // A key of one common letter masks that letter wherever it is, but never inside a mask.
  const once = redactSecrets("Fake key", { apiKey: "e" });
  equal(once, "Fak<the API key> k<the API key>y");
  equal(redactSecrets(once, { apiKey: "e" }), once);
});

Deno.test("redactError redacts the message and stack of an error and of its causes, keeping its class", () => {
  const cause = new TypeError('Invalid header value: "Bearer sk-X\nabc"');
  const error = redactError(new ConnectionError("Cannot reach: sk-X\nabc", { cause }), {
    apiKey: "sk-X\nabc",
  });
  equal(error instanceof ConnectionError, true);
  equal(error.message, "Cannot reach: <the API key>");
  equal(cause.message, 'Invalid header value: "Bearer <the API key>"');
  equal(`${error.stack}${cause.stack}`.includes("sk-X"), false);
});

Deno.test("redactSecrets masks the key a server repeats altered: split, in another case, escaped, in base64", () => {
  const key = "sk-ant-SECRETKEY1234567890";
  const shown = (text: string) => redactSecrets(text, { apiKey: key });
  for (
    const text of [
      `${key.slice(0, 10)}\n${key.slice(10)}`,
      `${key.slice(0, 10)}\\n${key.slice(10)}`,
      key.toUpperCase(),
      "\\u0073k-ant-SECRETKEY1234567890",
      `Basic ${btoa(`user:${key}`)}`,
      btoa(`ab${key}x`),
      btoa(`a${key}`),
    ]
  ) {
    const result = shown(`echo: ${text}`);
    equal(result.includes("<the API key>"), true, result);
    for (const piece of [key.slice(7, 19), btoa(key).slice(4, 16)]) {
      equal(result.toLowerCase().includes(piece.toLowerCase()), false, `${piece} in ${result}`);
    }
  }
  equal(shown("sk-ant-OTHER text"), "sk-ant-OTHER text");
});

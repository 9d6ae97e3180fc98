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

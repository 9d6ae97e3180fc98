import { deepStrictEqual, equal, match } from "node:assert/strict";
import { footerLine, tokens } from "../../../src/cli/interactive/footer.ts";
import { parseSlashCommand, SLASH_COMMANDS, slashHelp } from "../../../src/cli/interactive/slash_commands.ts";
import { createStyle } from "../../../src/cli/interactive/style.ts";

Deno.test("parseSlashCommand reads commands and arguments, suggests for typos, and leaves paths as prompts", () => {
  deepStrictEqual(parseSlashCommand("/help"), { kind: "command", name: "help", argument: "" });
  deepStrictEqual(parseSlashCommand("  /permissions allow Bash(npm test *)  "), {
    kind: "command",
    name: "permissions",
    argument: "allow Bash(npm test *)",
  });
  deepStrictEqual(parseSlashCommand("/MODEL claude-opus-5"), {
    kind: "command",
    name: "model",
    argument: "claude-opus-5",
  });
  deepStrictEqual(parseSlashCommand("/compcat"), { kind: "unknown", name: "compcat", suggestion: "compact" });
  deepStrictEqual(parseSlashCommand("/zzz"), { kind: "unknown", name: "zzz", suggestion: null });
  equal(parseSlashCommand("/etc/hosts is odd"), null);
  equal(parseSlashCommand("why /help?"), null);
  equal(parseSlashCommand("/"), null);
});

Deno.test("slashHelp lists every command", () => {
  const help = slashHelp();
  for (const command of SLASH_COMMANDS) match(help, new RegExp(`/${command.name}\\b`));
});

Deno.test("the footer shows model, modes, tokens with cache hits, cost and context share, cut to the width", () => {
  const style = createStyle({ colors: false });
  const line = footerLine({
    model: "claude-sonnet-5-5",
    permissionMode: "acceptEdits",
    sandbox: "workspace-write",
    usage: {
      inputTokens: 1_200,
      outputTokens: 340,
      cacheReadInputTokens: 15_000,
      cacheCreationInputTokens: 800,
    },
    costUsd: 0.01234,
    contextTokens: 250_000,
    contextWindow: 1_000_000,
  }, { width: 200, style });
  equal(
    line,
    "claude-sonnet-5-5 · acceptEdits · sandbox workspace-write · 17k in, 15k cached / 340 out · $0.0123 · " +
      "context 25% of 1.0M",
  );
  const narrow = footerLine({
    model: "m",
    permissionMode: "default",
    sandbox: "read-only",
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    costUsd: null,
    contextTokens: null,
    contextWindow: null,
  }, { width: 30, style });
  equal(narrow.length <= 29, true, narrow);
  match(narrow, /…$/);
  equal(tokens(999), "999");
  equal(tokens(1_500), "1.5k");
  equal(tokens(25_000), "25k");
  equal(tokens(2_500_000), "2.5M");
});

Deno.test("the footer shows a model name from a repository's settings without its escape sequences", () => {
  const line = footerLine({
    model: "claude\u001b]0;PWNED\u0007\u001b[1A",
    permissionMode: "default",
    sandbox: "read-only",
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    costUsd: null,
    contextTokens: null,
    contextWindow: null,
  }, { width: 200, style: createStyle({ colors: false }) });
  equal(line.includes("\u001b"), false, line);
  match(line, /^claude␛\]0;PWNED␇␛\[1A · default/);
});

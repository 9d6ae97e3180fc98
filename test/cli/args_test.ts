import { deepStrictEqual, equal, match, throws } from "node:assert/strict";
import {
  type CliEnvironment,
  closest,
  helpText,
  parseCli,
  splitRules,
  UsageError,
} from "../../src/cli/args.ts";
import { EXIT_DESCRIPTIONS } from "../../src/cli/exit_codes.ts";
import { isRuleWord, OPTIONS, RULE_TOOL_NAMES } from "../../src/cli/options.ts";
import { BUILTIN_TOOL_NAMES } from "../../src/permissions/rules.ts";
import { DEFAULT_MAX_PROCESSES } from "../../src/sandbox/limits.ts";

const TERMINAL: CliEnvironment = { stdinIsTerminal: true, stdoutIsTerminal: true };
const PIPED: CliEnvironment = { stdinIsTerminal: false, stdoutIsTerminal: true };

Deno.test("parseCli reads the commands", async (t) => {
  const cases: [string[], unknown][] = [
    [["--version"], { kind: "version" }],
    [["-V"], { kind: "version" }],
    [["version"], { kind: "version" }],
    [["--help"], { kind: "help" }],
    [["-h"], { kind: "help" }],
    [["help"], { kind: "help" }],
    [["tools"], { kind: "tools", json: false }],
    [["tools", "--json"], { kind: "tools", json: true }],
    [["tool", "ReadFile", '{"path":"/a"}'], { kind: "tool", name: "ReadFile", input: '{"path":"/a"}' }],
    [["doctor"], { kind: "doctor" }],
    [["sessions", "--json"], { kind: "sessions", json: true }],
    [["permissions"], { kind: "permissions", json: false }],
    [["permissions", "test", "Bash(git push)"], {
      kind: "permissions-test",
      target: "Bash(git push)",
      input: null,
    }],
    [["permissions", "test", "Bash", '{"command":"ls"}'], {
      kind: "permissions-test",
      target: "Bash",
      input: '{"command":"ls"}',
    }],
    [["trust"], { kind: "trust", revoke: false }],
    [["trust", "--revoke"], { kind: "trust", revoke: true }],
    [["completions", "zsh"], { kind: "completions", shell: "zsh" }],
    [["-p", "fix", "it"], { kind: "prompt", prompt: "fix it", headless: true }],
    [["-p"], { kind: "prompt", prompt: null, headless: true }],
    // With -p every word is the prompt, even a command's name.
    [["-p", "tools"], { kind: "prompt", prompt: "tools", headless: true }],
    // A prompt that starts with "-" goes after --.
    [["-p", "--", "-x", "means what?"], { kind: "prompt", prompt: "-x means what?", headless: true }],
    [["--print", "--model", "m", "q"], { kind: "prompt", prompt: "q", headless: true }],
    [["-pq", "q"], { kind: "prompt", prompt: "q", headless: true }],
  ];
  for (const [argv, command] of cases) {
    await t.step(argv.join(" "), () => deepStrictEqual(parseCli(argv, TERMINAL).command, command));
  }
});

Deno.test("a prompt with an output format for programs is headless in a terminal too, as with -p", async (t) => {
  for (const format of ["json", "stream-json"]) {
    await t.step(format, () => {
      deepStrictEqual(parseCli(["--output-format", format, "why", "is", "it", "slow"], TERMINAL).command, {
        kind: "prompt",
        prompt: "why is it slow",
        headless: true,
      });
    });
  }
  deepStrictEqual(parseCli(["--output-format", "text", "why"], TERMINAL).command, {
    kind: "prompt",
    prompt: "why",
    headless: false,
  });
});

Deno.test("a prompt without -p is headless when stdin or stdout is not a terminal, or on CI", async (t) => {
  const cases: [CliEnvironment, boolean][] = [
    [TERMINAL, false],
    [PIPED, true],
    [{ stdinIsTerminal: true, stdoutIsTerminal: false }, true],
    [{ ...TERMINAL, ci: "true" }, true],
    [{ ...TERMINAL, ci: "1" }, true],
    [{ ...TERMINAL, ci: "false" }, false],
  ];
  for (const [environment, headless] of cases) {
    await t.step(JSON.stringify(environment), () => {
      deepStrictEqual(parseCli(["why", "is", "it", "slow"], environment).command, {
        kind: "prompt",
        prompt: "why is it slow",
        headless,
      });
    });
  }
  deepStrictEqual(parseCli([], PIPED).command, { kind: "prompt", prompt: null, headless: true });
});

Deno.test("parseCli leaves unset options null so settings can decide, and reads every option", () => {
  const defaults = parseCli(["tools"]);
  deepStrictEqual(
    [
      defaults.cd,
      defaults.sandbox,
      defaults.permissionMode,
      defaults.model,
      defaults.maxTurns,
      defaults.persist,
    ],
    [null, null, null, null, null, true],
  );
  deepStrictEqual(defaults.session, { kind: "new", id: null });
  const options = parseCli([
    "-C",
    "/tmp",
    "--read-only",
    "--sandbox=read-only",
    "--sandbox-network",
    "--strict-links",
    "--permission-mode",
    "plan",
    "--model",
    "m",
    "--max-tokens",
    "100",
    "--max-turns",
    "3",
    "--max-budget-usd",
    "0.25",
    "--allowedTools",
    "ReadFile,Bash(npm test *)",
    "--allowed-tools",
    "Grep",
    "--disallowedTools",
    "Bash(rm *)",
    "--add-dir",
    "/srv/a",
    "--add-dir",
    "/srv/b",
    "--approval-command",
    "./approve.sh",
    "--output-format",
    "stream-json",
    "--include-partial-messages",
    "--json-schema",
    "@schema.json",
    "--append-system-prompt-file",
    "extra.md",
    "--session-id",
    "0b9e9d2c-3f4a-4c1e-9a57-3a3f0d1c2b4e",
    "--no-session-persistence",
    "--trust",
    "-v",
    "-p",
    "q",
  ]);
  deepStrictEqual(
    {
      cd: options.cd,
      readOnly: options.readOnly,
      sandbox: options.sandbox,
      sandboxNetwork: options.sandboxNetwork,
      strictLinks: options.strictLinks,
      permissionMode: options.permissionMode,
      model: options.model,
      maxTokens: options.maxTokens,
      maxTurns: options.maxTurns,
      maxBudgetUsd: options.maxBudgetUsd,
      allowedTools: options.allowedTools,
      disallowedTools: options.disallowedTools,
      addDirs: options.addDirs,
      approvalCommand: options.approvalCommand,
      outputFormat: options.outputFormat,
      includePartialMessages: options.includePartialMessages,
      jsonSchema: options.jsonSchema,
      systemPrompt: options.systemPrompt,
      session: options.session,
      persist: options.persist,
      trust: options.trust,
      verbose: options.verbose,
    },
    {
      cd: "/tmp",
      readOnly: true,
      sandbox: "read-only",
      sandboxNetwork: true,
      strictLinks: true,
      permissionMode: "plan",
      model: "m",
      maxTokens: 100,
      maxTurns: 3,
      maxBudgetUsd: 0.25,
      allowedTools: ["ReadFile", "Bash(npm test *)", "Grep"],
      disallowedTools: ["Bash(rm *)"],
      addDirs: ["/srv/a", "/srv/b"],
      approvalCommand: "./approve.sh",
      outputFormat: "stream-json",
      includePartialMessages: true,
      jsonSchema: "@schema.json",
      systemPrompt: { replace: null, append: { file: "extra.md" } },
      session: { kind: "new", id: "0b9e9d2c-3f4a-4c1e-9a57-3a3f0d1c2b4e" },
      persist: false,
      trust: true,
      verbose: true,
    },
  );
  equal(parseCli(["--dangerously-skip-permissions", "-p", "q"]).permissionMode, "bypassPermissions");
  deepStrictEqual(parseCli(["-c", "-p", "q"]).session, { kind: "continue" });
  deepStrictEqual(parseCli(["-r", "abc12345", "-p", "q"]).session, { kind: "resume", id: "abc12345" });
  // -r alone (or before a word that cannot be an id, or an option) picks from a list.
  deepStrictEqual(parseCli(["-r"]).session, { kind: "pick" });
  deepStrictEqual(parseCli(["-r", "fix the tests"]).session, { kind: "pick" });
  deepStrictEqual(parseCli(["-r", "fix the tests"]).command, {
    kind: "prompt",
    prompt: "fix the tests",
    headless: false,
  });
  deepStrictEqual(parseCli(["--resume", "-v"]).session, { kind: "pick" });
  equal(parseCli(["--provider", "ollama", "-p", "q"]).provider, "ollama");
  equal(parseCli(["-p", "q"]).provider, null);
  deepStrictEqual(parseCli(["-Cdir", "tools"]).cd, "dir");
});

Deno.test("parseCli throws UsageError, with a suggestion where one is close, for malformed command lines", async (t) => {
  const cases = [
    [["frobnicate"], null],
    [["tols"], /Unknown command "tols"; did you mean "tools"\? To send it as a prompt: mewcode -p "tols"/],
    [["sesions"], /did you mean "sessions"/],
    [["tool", "ReadFile"], /Missing arguments: usage: mewcode tool NAME/],
    [["tool", "A", "{}", "extra"], /Too many arguments/],
    [["--sandbox", "loose", "tools"], /Invalid --sandbox "loose": use one of read-only, workspace-write/],
    [["--permission-mode", "acceptedits", "tools"], /did you mean "acceptEdits"\?/],
    [["--output-format", "jsonl", "-p", "q"], /Invalid --output-format "jsonl".*did you mean "json"\?/],
    [["--max-turns", "0", "tools"], /Invalid --max-turns "0": expected a positive integer/],
    [["--max-turns", "2.5", "tools"], /Invalid --max-turns/],
    [["--max-budget-usd", "-1", "-p", "q"], /--max-budget-usd needs a value|Invalid --max-budget-usd/],
    [["--max-budget-usd", "0", "-p", "q"], /Invalid --max-budget-usd "0": expected an amount/],
    [["--max-budget-usd", "1e3", "-p", "q"], /Invalid --max-budget-usd "1e3"/],
    [["--no-such-flag"], /Unknown option --no-such-flag/],
    [["--verbos", "-p", "q"], /Unknown option --verbos; did you mean --verbose\?/],
    [["--allowedtools", "x"], /did you mean --allowedTools\?/],
    [["--model"], /--model needs a value: --model NAME/],
    [["--model", "-p", "q"], /--model needs a value/],
    [["-x", "q"], /Unknown option -x; a prompt that starts with "-" goes after --/],
    [["--print=yes", "q"], /--print takes no value/],
    [["-C", "", "tools"], /path is empty/],
    [["-c", "-r", "abc", "-p", "q"], /--continue and --resume cannot be used together/],
    [["--session-id", "42", "-p", "q"], /Invalid --session-id "42": expected a UUID/],
    [["--quiet", "--verbose", "-p", "q"], /--quiet and --verbose cannot be used together/],
    [["--dangerously-skip-permissions", "--permission-mode", "plan", "-p", "q"], /cannot be used together/],
    [["--include-partial-messages", "-p", "q"], /needs --output-format stream-json/],
    [["--json", "-p", "q"], /--json only applies to: mewcode tools, mewcode sessions/],
    [["--revoke", "tools"], /--revoke only applies to: mewcode trust/],
    [
      ["permissions", "test", "Bash(ls)", "--json"],
      /mewcode permissions; mewcode permissions test prints text, whose "Decision:" line says allow, ask or deny$/,
    ],
    [
      ["sessions", "--output-format", "json"],
      /^--output-format only applies to a prompt \(mewcode -p "…"\); for JSON, use mewcode sessions --json$/,
    ],
    [
      ["doctor", "--output-format", "stream-json"],
      /^--output-format only applies to a prompt \(mewcode -p "…"\)$/,
    ],
    [["tool", "ReadFile", "{}", "--json-schema", "{}"], /--json-schema only applies to a prompt/],
    [["permissions", "--wait-for-stdin"], /--wait-for-stdin only applies to a prompt/],
    [["--allowedTools", "Bash(npm test", "-p", "q"], /a "\(" is never closed/],
    [["permissions", "frob"], /Unknown permissions command "frob"/],
    [["completions", "tcsh"], /Unknown shell "tcsh": use mewcode completions bash, zsh or fish/],
    [["--provider", "openia", "-p", "q"], /did you mean "openai"\?/],
  ] as const;
  for (const [argv, message] of cases) {
    await t.step(argv.join(" ") || "(nothing)", () => {
      if (message === null) {
        // A word far from every command is a prompt, not a typo.
        deepStrictEqual(parseCli(argv, PIPED).command, {
          kind: "prompt",
          prompt: "frobnicate",
          headless: true,
        });
        return;
      }
      throws(() => parseCli(argv, PIPED), (error) => {
        equal(error instanceof UsageError, true, String(error));
        match((error as Error).message, message);
        return true;
      });
    });
  }
});

Deno.test("splitRules splits on commas and spaces outside parentheses only", () => {
  deepStrictEqual(splitRules("--allowedTools", "ReadFile, Bash(git log *) EditFile(src/**)"), [
    "ReadFile",
    "Bash(git log *)",
    "EditFile(src/**)",
  ]);
  deepStrictEqual(splitRules("--allowedTools", "Bash(echo a,b)"), ["Bash(echo a,b)"]);
  throws(() => splitRules("--allowedTools", " , "), /no rule given/);
});

Deno.test("closest suggests within a third of the word and never for distant words", () => {
  equal(closest("tols", ["tools", "doctor"]), "tools");
  equal(closest("test", ["trust", "tools"]), null);
  equal(closest("permisions", ["permissions"]), "permissions");
  equal(closest("x", ["tools"]), null);
});

Deno.test("help lists every option, command and exit status, and the documented defaults are true", () => {
  const help = helpText();
  for (const option of OPTIONS) match(help, new RegExp(`--${option.name}\\b`));
  for (const [code] of EXIT_DESCRIPTIONS) match(help, new RegExp(`^ +${code}  `, "m"));
  for (const command of ["tools", "tool", "sessions", "permissions", "trust", "doctor"]) {
    match(help, new RegExp(`mewcode ${command}\\b`));
  }
  match(help, new RegExp(`default ${DEFAULT_MAX_PROCESSES}\\)`));
  // Every line fits a 120-column terminal.
  for (const line of help.split("\n")) equal(line.length <= 150, true, line);
});

Deno.test("parseCli takes every rule word after --allowedTools and --disallowedTools, as --help shows them", () => {
  const options = parseCli(
    [
      "-p",
      "go",
      "--disallowedTools",
      "Bash(curl *)",
      "Bash(rm *)",
      "--allowedTools",
      "ReadFile",
      "Grep",
      "now",
    ],
    { stdinIsTerminal: true, stdoutIsTerminal: true },
  );
  deepStrictEqual(options.disallowedTools, ["Bash(curl *)", "Bash(rm *)"]);
  deepStrictEqual(options.allowedTools, ["ReadFile", "Grep"]);
  // The words that are no rule stay the prompt's.
  deepStrictEqual(options.command, { kind: "prompt", prompt: "go now", headless: true });
});

Deno.test("the rule words the command line recognizes are the built-in tools' names", () => {
  deepStrictEqual([...RULE_TOOL_NAMES].sort(), [...BUILTIN_TOOL_NAMES].sort());
  for (const word of ["Bash", "Bash(git push *)", "EditFile(src/**)"]) equal(isRuleWord(word), true, word);
  for (const word of ["Fix", "bash", "Bash(", "Bashful", "ReadFile("]) equal(isRuleWord(word), false, word);
});

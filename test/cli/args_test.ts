import { deepStrictEqual, equal, throws } from "node:assert/strict";
import { DEFAULT_MODEL, parseCli, UsageError } from "../../src/cli/args.ts";

Deno.test("parseCli reads the commands", async (t) => {
  const cases: [string[], unknown][] = [
    [["--version"], { kind: "version" }],
    [["--help"], { kind: "help" }],
    [["-h"], { kind: "help" }],
    [["tools"], { kind: "tools", json: false }],
    [["tools", "--json"], { kind: "tools", json: true }],
    [["tool", "ReadFile", '{"path":"/a"}'], { kind: "tool", name: "ReadFile", input: '{"path":"/a"}' }],
    [["doctor"], { kind: "doctor" }],
    [["-p", "fix", "it"], { kind: "print", prompt: "fix it" }],
    [["-p"], { kind: "print", prompt: null }],
  ];
  for (const [argv, command] of cases) {
    await t.step(argv.join(" "), () => deepStrictEqual(parseCli(argv).command, command));
  }
});

Deno.test("parseCli applies defaults and reads every option", () => {
  const defaults = parseCli(["tools"]);
  equal(defaults.cd, null);
  equal(defaults.sandbox, "workspace-write");
  equal(defaults.permissionMode, "default");
  equal(defaults.model, DEFAULT_MODEL);
  equal(defaults.maxTurns, null);
  const options = parseCli([
    "-C",
    "/tmp",
    "--read-only",
    "--sandbox",
    "read-only",
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
    "-v",
    "tools",
  ]);
  deepStrictEqual(
    [
      options.cd,
      options.readOnly,
      options.sandbox,
      options.sandboxNetwork,
      options.strictLinks,
      options.permissionMode,
      options.model,
      options.maxTokens,
      options.maxTurns,
      options.verbose,
    ],
    ["/tmp", true, "read-only", true, true, "plan", "m", 100, 3, true],
  );
});

Deno.test("parseCli throws UsageError for malformed command lines", async (t) => {
  const cases = [
    [[], /Missing a command/],
    [["frobnicate"], /Unknown command "frobnicate"/],
    [["tool", "ReadFile"], /Missing arguments: usage: mewcode tool NAME/],
    [["tool", "A", "{}", "extra"], /Too many arguments/],
    [["--sandbox", "loose", "tools"], /Invalid --sandbox "loose"/],
    [["--permission-mode", "yolo", "tools"], /Invalid --permission-mode "yolo"/],
    [["--max-turns", "0", "tools"], /Invalid --max-turns "0": expected a positive integer/],
    [["--max-turns", "2.5", "tools"], /Invalid --max-turns/],
    [["--no-such-flag"], /no-such-flag/],
    [["-C", "", "tools"], /path is empty/],
  ] as const;
  for (const [argv, message] of cases) {
    await t.step(argv.join(" ") || "(nothing)", () =>
      throws(() => parseCli(argv), (error) => {
        equal(error instanceof UsageError, true);
        return message.test((error as Error).message);
      }));
  }
});

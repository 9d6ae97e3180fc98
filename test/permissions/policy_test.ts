import { deepStrictEqual, equal, match, throws } from "node:assert/strict";
import { posix } from "node:path";
import { z } from "zod";
import type { PermissionMode } from "../../src/permissions/modes.ts";
import { createPolicy } from "../../src/permissions/policy.ts";
import type { Rule } from "../../src/permissions/rules.ts";
import { DirectExecutor } from "../../src/execution/executor.ts";
import { FileRecordStore } from "../../src/execution/file_records.ts";
import { ToolPipeline } from "../../src/execution/pipeline.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { writeFileTool } from "../../src/tools/write_file.ts";
import { fixedShell, NO_SHELL } from "../_fakes/pipeline.ts";
import { defineTool, textResult } from "../../src/tools/tool.ts";
import { allow, createScene, decide, decideBash, deny, policyFor, rule } from "./_policy_fixture.ts";
import { loadShellParser } from "../../src/permissions/shell_parser.ts";

// The permission modules load the shell parser when a caller first needs it; these tests call the
// parsing functions directly.
await loadShellParser();

type Expected = "allow" | "ask" | "deny";

Deno.test("each permission mode decides what no rule does", async (t) => {
  await using scene = await createScene();
  const table: Record<PermissionMode, { read: Expected; edit: Expected; bash: Expected }> = {
    default: { read: "allow", edit: "ask", bash: "ask" },
    acceptEdits: { read: "allow", edit: "allow", bash: "ask" },
    plan: { read: "allow", edit: "deny", bash: "deny" },
    dontAsk: { read: "allow", edit: "deny", bash: "deny" },
    bypassPermissions: { read: "allow", edit: "allow", bash: "allow" },
  };
  for (const [mode, expected] of Object.entries(table) as [PermissionMode, typeof table.default][]) {
    const policy = policyFor(scene, { mode });
    await t.step(`${mode}: ReadFile → ${expected.read}`, async () => {
      equal((await decide(policy, scene, "ReadFile", { path: "src/a.ts" })).behavior, expected.read);
    });
    await t.step(`${mode}: EditFile → ${expected.edit}`, async () => {
      equal((await decide(policy, scene, "EditFile", { path: "src/a.ts" })).behavior, expected.edit);
    });
    await t.step(`${mode}: Bash → ${expected.bash}`, async () => {
      equal((await decideBash(policy, scene, "npm test")).behavior, expected.bash);
    });
  }
});

Deno.test("dontAsk mode allows what rules allow and denies everything else without asking", async (t) => {
  await using scene = await createScene();
  const rules = [...allow("Bash(npm test *)", "EditFile(src/**)"), rule("Bash(git push *)", "ask")];
  const policy = policyFor(scene, { mode: "dontAsk", rules });
  const cases: [string, string, Record<string, unknown>, Expected][] = [
    ["an allowed command", "Bash", { command: "npm test" }, "allow"],
    ["a command no rule allows", "Bash", { command: "npm run build" }, "deny"],
    ["a command an ask rule names", "Bash", { command: "git push origin main" }, "deny"],
    ["an allowed edit", "EditFile", { path: "src/a.ts" }, "allow"],
    ["an edit no rule allows", "WriteFile", { path: "README.md" }, "deny"],
    ["a read inside the workspace", "ReadFile", { path: "src/a.ts" }, "allow"],
  ];
  for (const [name, tool, input, expected] of cases) {
    await t.step(`${name} → ${expected}`, async () => {
      const decision = await decide(policy, scene, tool, input);
      equal(decision.behavior, expected, decision.reason);
      if (decision.behavior === "deny") match(decision.reason, /dontAsk mode/);
    });
  }
  await t.step("the denial hints at the rule that would allow it", async () => {
    const decision = await decideBash(policy, scene, "npm run build");
    equal(decision.behavior === "deny" ? decision.hint : "", '--allowedTools "Bash(npm run *)"');
  });
});

Deno.test("additional directories are reached by the same rules as the workspace", async (t) => {
  await using scene = await createScene();
  const notes = posix.join(scene.extra, "notes.md");
  const cases: [string, PermissionMode, boolean, Rule[], string, Expected][] = [
    ["a read there", "default", true, [], "ReadFile", "allow"],
    ["a search there", "default", true, [], "Grep", "allow"],
    ["an edit there in default mode", "default", true, [], "EditFile", "ask"],
    ["an edit there in acceptEdits", "acceptEdits", true, [], "EditFile", "allow"],
    ["an edit there a deny rule covers", "acceptEdits", true, deny("EditFile(*.md)"), "EditFile", "deny"],
    [
      "an edit there an absolute rule allows",
      "default",
      true,
      allow(`EditFile(/${scene.extra}/**)`),
      "EditFile",
      "allow",
    ],
    ["a read there without --add-dir", "default", false, [], "ReadFile", "deny"],
    [
      "an edit there without --add-dir, even in bypassPermissions",
      "bypassPermissions",
      false,
      [],
      "EditFile",
      "deny",
    ],
  ];
  for (const [name, mode, additional, rules, tool, expected] of cases) {
    await t.step(`${name} → ${expected}`, async () => {
      const input = tool === "Grep" ? { pattern: "x", path: scene.extra } : { path: notes };
      const decision = await decide(policyFor(scene, { mode, rules, additional }), scene, tool, input);
      equal(decision.behavior, expected, decision.reason);
    });
  }
  await t.step("a redirection there is an edit inside in acceptEdits", async () => {
    const policy = policyFor(scene, { mode: "acceptEdits", rules: allow("Bash(echo *)"), additional: true });
    equal((await decideBash(policy, scene, `echo x > ${notes}`)).behavior, "allow");
  });
  await t.step("a denial outside names --add-dir", async () => {
    const decision = await decide(policyFor(scene), scene, "ReadFile", { path: notes });
    equal(decision.behavior === "deny" ? decision.hint : "", `--add-dir "${scene.extra}"`);
  });
});

Deno.test("deny beats ask beats allow across every layer, whatever order they are given in", async (t) => {
  await using scene = await createScene();
  const cases: [string, Rule[], Expected, string][] = [
    [
      "a deny in user settings beats an allow from the CLI",
      [
        rule("Bash(git push *)", "allow", "cli"),
        rule("Bash(git push *)", "deny", "user"),
      ],
      "deny",
      "user settings",
    ],
    [
      "a deny in project settings beats an allow in local settings",
      [
        rule("Bash(git *)", "allow", "local"),
        rule("Bash(git push *)", "deny", "project"),
      ],
      "deny",
      "project settings",
    ],
    [
      "an ask beats an allow",
      [
        rule("Bash", "allow", "cli"),
        rule("Bash(git push *)", "ask", "user"),
      ],
      "ask",
      "user settings",
    ],
    [
      "a deny beats an ask",
      [
        rule("Bash(git push *)", "ask", "cli"),
        rule("Bash(git *)", "deny", "session"),
      ],
      "deny",
      "this session's approvals",
    ],
    [
      "an allow applies when nothing restricts",
      [
        rule("Bash(git push *)", "allow", "project"),
        rule("Bash(npm *)", "deny", "user"),
      ],
      "allow",
      "project settings",
    ],
  ];
  for (const [name, rules, expected, source] of cases) {
    await t.step(name, async () => {
      for (const ordered of [rules, [...rules].reverse()]) {
        const decision = await decideBash(
          policyFor(scene, { mode: "bypassPermissions", rules: ordered }),
          scene,
          "git push origin main",
        );
        equal(decision.behavior, expected);
        equal(decision.decidedBy?.kind === "rule" ? decision.decidedBy.source : "", source);
      }
    });
  }
});

Deno.test("plan mode keeps to read-only tools even where rules allow more", async () => {
  await using scene = await createScene();
  const policy = policyFor(scene, { mode: "plan", rules: allow("EditFile(src/**)", "Bash") });
  equal((await decide(policy, scene, "EditFile", { path: "src/a.ts" })).behavior, "deny");
  equal((await decideBash(policy, scene, "ls")).behavior, "deny");
  equal((await decide(policy, scene, "Grep", { pattern: "x" })).behavior, "allow");
});

Deno.test("other tools are decided by name and metadata", async (t) => {
  await using scene = await createScene();
  const probe = defineTool({
    name: "Probe",
    description: "A probe for tests",
    category: "other",
    inputSchema: z.object({}).strict(),
    isReadOnly: false,
    isDestructive: false,
    execute: () => Promise.resolve(textResult("ok")),
  });
  const cases: [string, PermissionMode, Rule[], Expected][] = [
    ["the mode decides an edit-like tool", "default", [], "ask"],
    ["acceptEdits allows it", "acceptEdits", [], "allow"],
    ["a rule naming it allows it", "default", allow("Probe"), "allow"],
    ["a deny naming it denies it", "bypassPermissions", deny("Probe"), "deny"],
  ];
  for (const [name, mode, rules, expected] of cases) {
    await t.step(`${name} → ${expected}`, async () => {
      const policy = policyFor(scene, { mode, rules });
      equal((await policy.decide({ tool: probe, input: {}, callId: "c" })).behavior, expected);
    });
  }
  await t.step("a read-only tool named Bash is not read as a command", async () => {
    const impostor = defineTool({
      name: "Bash",
      description: "Not the shell",
      category: "other",
      inputSchema: z.object({}).strict(),
      isReadOnly: true,
      execute: () => Promise.resolve(textResult("ok")),
    });
    const policy = policyFor(scene, { mode: "plan", rules: deny("Bash(rm *)") });
    deepStrictEqual((await policy.decide({ tool: impostor, input: {}, callId: "c" })).behavior, "allow");
  });
});

Deno.test("createPolicy refuses a rule that parseRule would have refused", () => {
  throws(
    () =>
      createPolicy({
        mode: "default",
        rules: [{ tool: "Bash", specifier: "a && b", action: "allow", source: { layer: "cli" } }],
        root: "/ws",
        home: "/home/u",
        protectedPaths: PROTECTED_PATHS,
      }),
    /Cannot use rule "Bash\(a && b\)": a Bash rule matches one simple command/,
  );
});

Deno.test("a rule naming a protected path lets WriteFile write it through the pipeline; a catch-all does not", async (t) => {
  await using scene = await createScene();
  const cases: [string, Rule[], boolean][] = [
    ["WriteFile(.git/info/exclude)", allow("WriteFile(.git/info/exclude)"), true],
    ["WriteFile(**)", allow("WriteFile(**)"), false],
  ];
  for (const [name, rules, written] of cases) {
    await t.step(`${name} → ${written ? "written" : "refused"}`, async () => {
      const registry = new ToolRegistry();
      registry.register(writeFileTool);
      const pipeline = new ToolPipeline({
        registry,
        executor: new DirectExecutor(),
        policy: policyFor(scene, { mode: "bypassPermissions", rules }),
        files: new FileRecordStore(),
        root: scene.root,
        strictLinks: false,
        shell: fixedShell(NO_SHELL),
        requireRead: false,
      });
      const path = posix.join(scene.root, ".git/info/exclude");
      const before = await Deno.readTextFile(path);
      const input = { path, content: `${before}${name}\n` };
      const { outcome } = await pipeline.run({ id: "1", name: "WriteFile", input }, {
        signal: new AbortController().signal,
      });
      equal(outcome.status, written ? "completed" : "denied");
      equal(await Deno.readTextFile(path), written ? input.content : before);
      if (!written) equal(outcome.denial?.hint, '--allowedTools "WriteFile(.git/info/exclude)"');
    });
  }
});

import { ok } from "node:assert/strict";
import { z } from "zod";
import { buildSystemPrompt, type SystemPromptOptions } from "../../src/agent/system_prompt.ts";
import type { PermissionMode } from "../../src/permissions/modes.ts";
import { defineTool, type SandboxMode, textResult } from "../../src/tools/tool.ts";

const readFile = defineTool({
  name: "ReadFile",
  description: "Reads. Test tool.",
  category: "file",
  inputSchema: z.object({}).strict(),
  isReadOnly: true,
  execute: () => Promise.resolve(textResult("")),
});

Deno.test("buildSystemPrompt states the workspace root, absolute paths, platform, date and tool guidance", () => {
  const prompt = buildSystemPrompt({
    root: "/home/ada/app",
    platform: "linux x86_64",
    date: new Date("2026-03-04T12:00:00Z"),
    tools: [readFile],
  });
  for (
    const text of [
      "Workspace root: /home/ada/app",
      "must be absolute",
      "linux x86_64",
      "2026-03-04",
      "ReadFile reads",
    ]
  ) {
    ok(prompt.includes(text), `mentions ${text}`);
  }
  ok(!prompt.includes("Bash runs"), "guidance only for the tools offered");
  ok(!prompt.includes("Plan mode"));
});

Deno.test("buildSystemPrompt in plan mode says to make no changes", () => {
  const prompt = buildSystemPrompt({
    root: "/w",
    platform: "linux",
    date: new Date(),
    tools: [],
    permissionMode: "plan",
  });
  ok(prompt.includes("make no changes"));
});

const bash = defineTool({
  name: "Bash",
  description: "Runs. Test tool.",
  category: "shell",
  inputSchema: z.object({}).strict(),
  execute: () => Promise.resolve(textResult("")),
});

function prompt(options: Partial<SystemPromptOptions>): string {
  return buildSystemPrompt({
    root: "/w",
    platform: "linux",
    date: new Date(),
    tools: [readFile],
    ...options,
  });
}

Deno.test("buildSystemPrompt states the git branch and the short status with the lines left out", () => {
  const text = prompt({
    repository: {
      gitRoot: "/w",
      head: { kind: "branch", name: "main" },
      status: { kind: "ok", lines: ["## main...origin/main [ahead 1]", " M src/a.ts"], more: 6 },
    },
  });
  for (
    const part of ["Git HEAD: branch main", "  ## main...origin/main [ahead 1]\n   M src/a.ts\n  … 6 more"]
  ) {
    ok(text.includes(part), `mentions ${JSON.stringify(part)}`);
  }
  ok(!text.includes("Git repository root"), "the root is named only when it is not the workspace");
});

Deno.test("buildSystemPrompt says when HEAD is detached, the status unavailable or there is no repository", () => {
  const detached = prompt({
    repository: {
      gitRoot: "/repo",
      head: { kind: "detached", commit: "1a2b3c4" },
      status: { kind: "unavailable", reason: "git status took longer than 3 s" },
    },
  });
  ok(detached.includes("Git repository root: /repo"));
  ok(detached.includes("Git HEAD: detached at commit 1a2b3c4"));
  ok(detached.includes("Git status: unavailable (git status took longer than 3 s)"));
  const none = prompt({ repository: { gitRoot: null, head: null, status: null } });
  ok(none.includes("not in a git repository"));
  ok(!none.includes("Git HEAD"));
});

Deno.test("buildSystemPrompt states the shell's sandbox and network only when Bash is offered", async (t) => {
  const cases: [SandboxMode, boolean, string][] = [
    ["read-only", false, "read-only sandbox"],
    ["workspace-write", false, "change files only inside the workspace"],
    ["workspace-write", true, "the network is allowed"],
    ["danger-full-access", false, "without a sandbox"],
  ];
  for (const [mode, network, part] of cases) {
    await t.step(`${mode}${network ? " with network" : ""}`, () => {
      const text = prompt({ tools: [readFile, bash], sandbox: mode, sandboxNetwork: network });
      ok(text.includes("- Shell: ") && text.includes(part), part);
      const networkOff = text.includes("the network is off");
      ok(networkOff === (!network && mode !== "danger-full-access"), "network off said exactly when off");
    });
  }
  ok(!prompt({ sandbox: "workspace-write" }).includes("- Shell:"), "no Bash, no sandbox line");
});

Deno.test("buildSystemPrompt names every permission mode, and headless says no one can answer or approve", async (t) => {
  const cases: [PermissionMode, string][] = [
    ["default", "ask the user first"],
    ["acceptEdits", "file edits are allowed"],
    ["plan", "Only reading and searching"],
    ["dontAsk", "no one is asked"],
    ["bypassPermissions", "Every tool call is allowed"],
  ];
  for (const [mode, part] of cases) {
    await t.step(mode, () => {
      const text = prompt({ permissionMode: mode });
      ok(text.includes(`Permission mode: ${mode}. `) && text.includes(part), part);
    });
  }
  const headless = prompt({ permissionMode: "default", headless: true });
  for (const part of ["# Headless", "no one can answer", "exactly what is missing", "are denied"]) {
    ok(headless.includes(part), `headless mentions ${part}`);
  }
  ok(!prompt({ permissionMode: "default" }).includes("# Headless"));
});

Deno.test("buildSystemPrompt adds the memory files under their paths, with cut notices and left-out files", () => {
  const text = prompt({
    memory: {
      sections: [
        { path: "/home/ada/.mewcode/AGENTS.md", scope: "user", content: "Answer briefly.\n", cut: null },
        { path: "/w/AGENTS.md", scope: "project", content: "Run deno task test.\n", cut: "[mewcode cut …]" },
      ],
      notices: ["Skipped /w/sub/AGENTS.md: its real path lies outside /w/sub"],
    },
  });
  const expected = [
    "# Project memory",
    "## /home/ada/.mewcode/AGENTS.md (user's own)\nAnswer briefly.",
    "## /w/AGENTS.md\nRun deno task test.\n[mewcode cut …]",
    "## Memory files left out\n- Skipped /w/sub/AGENTS.md: its real path lies outside /w/sub",
  ];
  let from = 0;
  for (const part of expected) {
    const at = text.indexOf(part, from);
    ok(at >= from, `mentions, in order, ${JSON.stringify(part)}`);
    from = at + part.length;
  }
  ok(
    text.indexOf("# Using the tools") < text.indexOf("# Project memory"),
    "the guidance is kept, before memory",
  );
  ok(!prompt({ memory: { sections: [], notices: [] } }).includes("Project memory"));
});

import { deepStrictEqual, equal, match } from "node:assert/strict";
import { posix } from "node:path";
import type { PermissionMode } from "../../src/permissions/modes.ts";
import type { Rule } from "../../src/permissions/rules.ts";
import { allow, createScene, decide, deny, policyFor, rule } from "./_policy_fixture.ts";

type Expected = "allow" | "ask" | "deny";

Deno.test("file rules match the real path: symlinks and .. cannot reach around them", async (t) => {
  await using scene = await createScene();
  const cases: [string, Rule[], string, Record<string, unknown>, Expected][] = [
    [
      "EditFile(src/**) allows a file in src",
      allow("EditFile(src/**)"),
      "EditFile",
      { path: "src/a.ts" },
      "allow",
    ],
    ["…and one not created yet", allow("EditFile(src/**)"), "EditFile", { path: "src/new/b.ts" }, "allow"],
    ["…but not WriteFile there: allow rules name one tool", allow("EditFile(src/**)"), "WriteFile", {
      path: "src/b.ts",
    }, "ask"],
    ["…not one behind src/link -> ../secrets", allow("EditFile(src/**)"), "EditFile", {
      path: "src/link/key",
    }, "ask"],
    ["…nor a new one there", allow("EditFile(src/**)"), "EditFile", { path: "src/link/new.txt" }, "ask"],
    ["…nor one reached by ..", allow("EditFile(src/**)"), "EditFile", { path: "src/../secrets/key" }, "ask"],
    ["WriteFile(src/**) allows a new file in src", allow("WriteFile(src/**)"), "WriteFile", {
      path: "src/new/b.ts",
    }, "allow"],
    ["ReadFile(secrets/**) denies the file", deny("ReadFile(secrets/**)"), "ReadFile", {
      path: "secrets/key",
    }, "deny"],
    ["…through the symlink", deny("ReadFile(secrets/**)"), "ReadFile", { path: "src/link/key" }, "deny"],
    ["…through ..", deny("ReadFile(secrets/**)"), "ReadFile", { path: "src/../secrets/key" }, "deny"],
    ["…through the workspace's alias", deny("ReadFile(secrets/**)"), "ReadFile", {
      path: "ALIAS/secrets/key",
    }, "deny"],
    [
      "…and Grep searching there",
      deny("ReadFile(secrets/**)"),
      "Grep",
      { pattern: "x", path: "src/link" },
      "deny",
    ],
    [
      "…and Glob searching there",
      deny("ReadFile(secrets)"),
      "Glob",
      { pattern: "*", path: "secrets" },
      "deny",
    ],
    ["ReadFile(./.env) denies the root .env", deny("ReadFile(./.env)"), "ReadFile", { path: ".env" }, "deny"],
    ["…not sub/.env", deny("ReadFile(./.env)"), "ReadFile", { path: "sub/.env" }, "allow"],
    [
      "ReadFile(.env) denies .env at any depth",
      deny("ReadFile(.env)"),
      "ReadFile",
      { path: "sub/.env" },
      "deny",
    ],
    ["EditFile(secrets/**) denies WriteFile there too", deny("EditFile(secrets/**)"), "WriteFile", {
      path: "secrets/new",
    }, "deny"],
    ["a bare ReadFile deny leaves Grep alone", deny("ReadFile"), "Grep", { pattern: "x" }, "allow"],
    [
      "an ask rule asks even for a read",
      [rule("ReadFile(.env)", "ask")],
      "ReadFile",
      { path: ".env" },
      "ask",
    ],
    ["reads inside the workspace never ask", [], "ReadFile", { path: "src/a.ts" }, "allow"],
    ["searches inside the workspace never ask", [], "Grep", { pattern: "x" }, "allow"],
    ["a read outside is denied", [], "ReadFile", { path: "/etc/hostname" }, "deny"],
    ["…even with an allow rule, since the tools cannot reach it", allow("ReadFile(//etc/**)"), "ReadFile", {
      path: "/etc/hostname",
    }, "deny"],
    ["a read of the home folder is outside", [], "ReadFile", { path: "HOME/.ssh/id_rsa" }, "deny"],
  ];
  for (const [name, rules, tool, input, expected] of cases) {
    await t.step(`${name} → ${expected}`, async () => {
      const path = typeof input.path === "string"
        ? input.path.replace(/^ALIAS/, scene.alias).replace(/^HOME/, scene.home)
        : undefined;
      const decision = await decide(policyFor(scene, { rules }), scene, tool, {
        ...input,
        ...(path ? { path } : {}),
      });
      equal(decision.behavior, expected, decision.reason);
    });
  }
});

Deno.test("a write to a protected path asks in every mode unless an allow rule names it", async (t) => {
  await using scene = await createScene();
  const modes: Record<PermissionMode, Expected> = {
    default: "ask",
    acceptEdits: "ask",
    plan: "deny",
    dontAsk: "deny",
    bypassPermissions: "ask",
  };
  const targets = [
    ".git/config",
    ".git/info/exclude",
    ".mewcode/settings.json",
    "src/gitlink/config",
    "sub/.git/x",
  ];
  for (const [mode, expected] of Object.entries(modes) as [PermissionMode, Expected][]) {
    for (const path of targets) {
      await t.step(`${mode}: WriteFile ${path} → ${expected}`, async () => {
        const decision = await decide(policyFor(scene, { mode }), scene, "WriteFile", { path });
        equal(decision.behavior, expected, decision.reason);
      });
    }
  }
  const named: [string, Rule[], string, Expected, string[]][] = [
    [
      "EditFile(.git/info/exclude) names it",
      allow("EditFile(.git/info/exclude)"),
      ".git/info/exclude",
      "allow",
      [".git/info/exclude"],
    ],
    [
      "EditFile(.mewcode/**) names the folder",
      allow("EditFile(.mewcode/**)"),
      ".mewcode/settings.json",
      "allow",
      [".mewcode/settings.json"],
    ],
    ["EditFile(**/.git/**) names .git", allow("EditFile(**/.git/**)"), "sub/.git/x", "allow", ["sub/.git/x"]],
    ["an absolute rule names it", allow("EditFile(//WS/.git/config)"), ".git/config", "allow", [
      ".git/config",
    ]],
    ["EditFile(**) does not", allow("EditFile(**)"), ".git/config", "ask", []],
    ["EditFile(*) does not", allow("EditFile(*)"), ".git/config", "ask", []],
    ["EditFile(.*/**) does not", allow("EditFile(.*/**)"), ".mewcode/settings.json", "ask", []],
    ["EditFile alone does not", allow("EditFile"), ".git/config", "ask", []],
    ["a rule for another protected path does not", allow("EditFile(.mewcode/**)"), ".git/config", "ask", []],
    ["WriteFile rules do not allow EditFile", allow("WriteFile(.git/config)"), ".git/config", "ask", []],
    [
      "the real path counts: src/gitlink/config is .git/config",
      allow("EditFile(.git/config)"),
      "src/gitlink/config",
      "allow",
      [".git/config"],
    ],
    [
      "a rule matching only the link's name does not",
      allow("EditFile(src/gitlink/**)"),
      "src/gitlink/config",
      "ask",
      [],
    ],
  ];
  for (const [name, rules, path, expected, grants] of named) {
    await t.step(`bypassPermissions, ${name}: EditFile ${path} → ${expected}`, async () => {
      const withRoot = rules.map((one) => ({
        ...one,
        specifier: one.specifier?.replace("WS", scene.root.slice(1)),
      }));
      const policy = policyFor(scene, { mode: "bypassPermissions", rules: withRoot as Rule[] });
      const decision = await decide(policy, scene, "EditFile", { path, old_string: "a", new_string: "b" });
      equal(decision.behavior, expected, decision.reason);
      if (decision.behavior === "allow") deepStrictEqual(decision.grants, { protectedPaths: grants });
    });
  }
  await t.step("the ask says why and carries the grant an approval gives", async () => {
    const decision = await decide(policyFor(scene, { mode: "acceptEdits" }), scene, "EditFile", {
      path: ".git/config",
    });
    equal(decision.behavior, "ask");
    if (decision.behavior !== "ask") return;
    match(decision.reason, /EditFile ".git\/config" would change a protected path: it is git metadata/);
    equal(decision.hint, '--allowedTools "EditFile(.git/config)"');
    deepStrictEqual(decision.grants, { protectedPaths: [".git/config"] });
  });
  await t.step("a deny rule still wins over a rule naming the path", async () => {
    const rules = [...allow("EditFile(.git/config)"), rule("EditFile(.git/**)", "deny", "user")];
    const decision = await decide(policyFor(scene, { rules }), scene, "EditFile", { path: ".git/config" });
    equal(decision.behavior, "deny");
  });
});

Deno.test("a file decision explains itself and hints at the flag that would allow it", async (t) => {
  await using scene = await createScene();
  await t.step("an edit in default mode", async () => {
    const decision = await decide(policyFor(scene), scene, "EditFile", { path: "src/a.ts" });
    equal(decision.behavior, "ask");
    if (decision.behavior !== "ask") return;
    match(
      decision.reason,
      /EditFile changes "src\/a.ts", which needs the user's approval in the default permission mode/,
    );
    equal(decision.hint, '--permission-mode acceptEdits or --allowedTools "EditFile(src/**)"');
  });
  await t.step("a read outside the workspace", async () => {
    const decision = await decide(policyFor(scene), scene, "ReadFile", {
      path: posix.join(scene.base, "other/x.md"),
    });
    equal(decision.behavior, "deny");
    if (decision.behavior !== "deny") return;
    match(decision.reason, /is outside the workspace ".*": ReadFile reads only inside them/);
    equal(decision.hint, `--add-dir "${posix.join(scene.base, "other")}"`);
  });
  await t.step(
    "no hint to add a system folder or the home's credentials (a planted link may lead there)",
    async () => {
      for (const path of ["/proc/1/environ", "/etc/passwd", "/", posix.join(scene.home, ".ssh/id_rsa")]) {
        const decision = await decide(policyFor(scene), scene, "ReadFile", { path });
        equal(decision.behavior, "deny", path);
        if (decision.behavior !== "deny") return;
        equal(decision.hint, undefined, `${path}: ${decision.hint}`);
      }
    },
  );
  await t.step("an allow rule names itself and its source", async () => {
    const rules = [rule("EditFile(src/**)", "allow", "project")];
    const decision = await decide(policyFor(scene, { rules }), scene, "EditFile", { path: "src/a.ts" });
    equal(decision.behavior, "allow");
    deepStrictEqual(decision.decidedBy, {
      kind: "rule",
      rule: "EditFile(src/**)",
      source: "project settings",
    });
  });
});

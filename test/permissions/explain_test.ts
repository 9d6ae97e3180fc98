import { deepStrictEqual, equal, match } from "node:assert/strict";
import { describeRules, explainDecision } from "../../src/permissions/explain.ts";
import { createScene, policyFor, rule, TOOLS } from "./_policy_fixture.ts";

const tools = { get: (name: string) => TOOLS[name] };

Deno.test("explainDecision shows what would happen to a call written like a rule, and why", async (t) => {
  await using scene = await createScene();
  const rules = [rule("Bash(git push --force *)", "deny", "user"), rule("Bash(npm test *)", "allow", "cli")];
  const policy = policyFor(scene, { rules });
  const explain = async (text: string) => {
    const explained = await explainDecision({ text }, { policy, tools, root: scene.root, home: scene.home });
    if (!explained.ok) throw new Error(explained.error);
    return explained.value.join("\n");
  };
  await t.step("an ask, with the rule that would allow it", async () => {
    const text = await explain("Bash(git push origin main)");
    match(text, /^Bash \{"command":"git push origin main"\}/);
    match(text, /mode: default/);
    match(text, /runs "git push origin main"/);
    match(text, /Decision: ask/);
    match(text, /Decided by: the permission mode default/);
    match(text, /To allow it: --allowedTools "Bash\(git push \*\)"/);
  });
  await t.step("a denial, with the rule and the settings it comes from", async () => {
    const text = await explain("Bash(sudo git push --force origin main)");
    match(text, /checked also as "git push --force origin main"/);
    match(text, /Decision: deny/);
    match(text, /Decided by: the rule Bash\(git push --force \*\) from user settings/);
    match(text, /To allow it: remove Bash\(git push --force \*\) from user settings/);
  });
  await t.step("an allow", async () => {
    const text = await explain("Bash(npm test -- --watch)");
    match(text, /Decision: allow/);
    match(text, /Decided by: the rule Bash\(npm test \*\) from --allowedTools/);
  });
  await t.step("a file path relative to the workspace, with where it really leads", async () => {
    const text = await explain("ReadFile(src/link/key)");
    match(text, /really is ".*\/ws\/secrets\/key"/);
    match(text, /Decision: allow/);
  });
  await t.step("a protected path, with what an approval would let through", async () => {
    const text = await explain("EditFile(.git/config)");
    match(text, /Decision: ask/);
    match(text, /To allow it: --allowedTools "EditFile\(.git\/config\)"/);
    match(text, /Once approved, may write the protected ".git\/config"/);
  });
});

Deno.test("explainDecision takes a tool and its JSON input, and refuses what names no call", async (t) => {
  await using scene = await createScene();
  const options = { policy: policyFor(scene), tools, root: scene.root, home: scene.home };
  await t.step("a tool and input", async () => {
    const explained = await explainDecision({ tool: "Grep", input: { pattern: "x" } }, options);
    equal(explained.ok, true);
    if (explained.ok) match(explained.value.join("\n"), /Decision: allow/);
  });
  await t.step("an unknown tool", async () => {
    const explained = await explainDecision({ text: "Nope(x)" }, options);
    equal(explained.ok, false);
    if (!explained.ok) match(explained.error, /"Nope": no such tool is enabled/);
  });
  await t.step("Bash without a command", async () => {
    const explained = await explainDecision({ text: "Bash" }, options);
    equal(explained.ok, false);
    if (!explained.ok) match(explained.error, /say what the call does, e.g. Bash\(…\)/);
  });
  await t.step("bad syntax", async () => {
    const explained = await explainDecision({ text: "Bash(ls" }, options);
    equal(explained.ok, false);
    if (!explained.ok) match(explained.error, /"\(" is never closed/);
  });
});

Deno.test("describeRules lists the effective rules by action, in the order they are checked, with origins", () => {
  const lines = describeRules([
    rule("Bash(npm test *)", "allow", "cli"),
    { ...rule("Bash(rm *)", "deny", "user"), source: { layer: "user", path: "/h/.mewcode/settings.json" } },
    rule("EditFile(src/**)", "allow", "project"),
  ]);
  deepStrictEqual(lines, [
    "Deny (checked first):",
    "  Bash(rm *)        user settings (/h/.mewcode/settings.json)",
    "Ask (then):",
    "  (none)",
    "Allow (last; anything else follows the permission mode):",
    "  Bash(npm test *)  --allowedTools",
    "  EditFile(src/**)  project settings",
  ]);
});

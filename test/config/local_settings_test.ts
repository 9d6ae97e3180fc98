import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { saveLocalRules } from "../../src/config/local_settings.ts";
import { resolveSettings } from "../../src/config/settings.ts";
import { describeTrust, trustWorkspace } from "../../src/config/trust.ts";
import { createSettingsFixture } from "./_settings_fixture.ts";

async function git(root: string, ...args: string[]): Promise<{ code: number; stdout: string }> {
  const output = await new Deno.Command("git", {
    args,
    cwd: root,
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", HOME: "/nonexistent" },
    stdout: "piped",
    stderr: "null",
  }).output();
  return { code: output.code, stdout: new TextDecoder().decode(output.stdout) };
}

Deno.test("saveLocalRules writes settings.local.json and makes git ignore it without touching .gitignore", async () => {
  await using fixture = await createSettingsFixture();
  await git(fixture.root, "init", "--quiet");
  await Deno.writeTextFile(join(fixture.root, ".gitignore"), "node_modules/\n");
  const saved = await saveLocalRules({
    home: fixture.home,
    root: fixture.root,
    rules: { allow: ["Bash(npm test)", "Bash(npm test)"] },
  });
  if (!saved.ok) throw new Error(saved.error);
  deepEqual(saved.value.added, ["Bash(npm test)"]);
  equal(saved.value.path, fixture.localPath);
  equal(saved.value.gitignoreNote, null);
  deepEqual(JSON.parse(await Deno.readTextFile(fixture.localPath)), {
    permissions: { allow: ["Bash(npm test)"] },
  });
  equal(await Deno.readTextFile(join(fixture.root, ".gitignore")), "node_modules/\n");
  equal(await Deno.readTextFile(join(fixture.root, ".mewcode", ".gitignore")), "settings.local.json\n");
  equal((await git(fixture.root, "check-ignore", "-q", ".mewcode/settings.local.json")).code, 0);
  equal((await git(fixture.root, "check-ignore", "-q", ".mewcode/settings.json")).code, 1);
});

Deno.test("saveLocalRules keeps the file's other settings and the .gitignore's other lines", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.localPath, {
    model: "m",
    permissions: { allow: ["ReadFile"], deny: ["WriteFile"] },
  });
  await fixture.write(join(fixture.root, ".mewcode", ".gitignore"), "cache/");
  const saved = await saveLocalRules({
    home: fixture.home,
    root: fixture.root,
    rules: { allow: ["ReadFile", "Bash(make)"], ask: ["Bash(git push *)"] },
  });
  if (!saved.ok) throw new Error(saved.error);
  deepEqual(saved.value.added, ["Bash(make)", "Bash(git push *)"]);
  deepEqual(JSON.parse(await Deno.readTextFile(fixture.localPath)), {
    model: "m",
    permissions: { allow: ["ReadFile", "Bash(make)"], deny: ["WriteFile"], ask: ["Bash(git push *)"] },
  });
  equal(
    await Deno.readTextFile(join(fixture.root, ".mewcode", ".gitignore")),
    "cache/\nsettings.local.json\n",
  );
});

Deno.test("saveLocalRules keeps a trusted folder trusted, and an untrusted one untrusted", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.projectPath, { permissions: { allow: ["ReadFile"] } });
  const untrusted = await saveLocalRules({
    home: fixture.home,
    root: fixture.root,
    rules: { allow: ["Bash(ls)"] },
  });
  equal(untrusted.ok && untrusted.value.trusted, false);
  const before = await resolveSettings({ home: fixture.home, root: fixture.root });
  deepEqual(before.ignored.map((item) => item.item), [
    'permissions.allow "ReadFile"',
    'permissions.allow "Bash(ls)"',
  ]);

  const { fingerprint } = await describeTrust({ home: fixture.home, root: fixture.root });
  await trustWorkspace({ home: fixture.home, root: fixture.root, fingerprint });
  const trusted = await saveLocalRules({
    home: fixture.home,
    root: fixture.root,
    rules: { allow: ["Bash(pwd)"] },
  });
  equal(trusted.ok && trusted.value.trusted, true);
  const after = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(after.trusted, true);
  deepEqual(after.rules.map((rule) => [rule.source, rule.rule]), [
    ["local", "Bash(ls)"],
    ["local", "Bash(pwd)"],
    ["project", "ReadFile"],
  ]);
});

Deno.test("saveLocalRules refuses to replace a malformed file or write through a linked .mewcode folder", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.localPath, '{"permissions": {"allow": [}');
  const malformed = await saveLocalRules({
    home: fixture.home,
    root: fixture.root,
    rules: { allow: ["Bash(ls)"] },
  });
  equal(malformed.ok, false);
  match(
    malformed.ok ? "" : malformed.error,
    /Cannot save the rule in ".*settings\.local\.json": line 1, column 28: expected a value, found "}": fix or delete the file/,
  );
  equal(await Deno.readTextFile(fixture.localPath), '{"permissions": {"allow": [}');

  const outside = join(fixture.home, "..", "outside");
  await Deno.mkdir(outside);
  await Deno.remove(join(fixture.root, ".mewcode"), { recursive: true });
  await Deno.symlink(outside, join(fixture.root, ".mewcode"));
  const linked = await saveLocalRules({
    home: fixture.home,
    root: fixture.root,
    rules: { allow: ["Bash(ls)"] },
  });
  match(linked.ok ? "" : linked.error, /is not a directory \(a symbolic link or a file\)/);
  deepEqual([...Deno.readDirSync(outside)], []);
});

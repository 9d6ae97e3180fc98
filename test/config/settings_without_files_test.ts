import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { NO_SETTINGS_FINGERPRINT, resolveSettings } from "../../src/config/settings.ts";
import { fingerprintFiles } from "../../src/config/trust_store.ts";
import { createSettingsFixture } from "./_settings_fixture.ts";

Deno.test("the fingerprint of a workspace without settings files is the hash fingerprintFiles computes", async () => {
  const computed = await fingerprintFiles([
    { name: "project", state: "absent" },
    { name: "local", state: "absent" },
  ]);
  equal(NO_SETTINGS_FINGERPRINT, computed);
});

Deno.test("without any settings file or trust record, resolveSettings gives what reading the files gives", async () => {
  await using fixture = await createSettingsFixture();
  const cli = {
    permissions: { deny: ["WriteFile"], defaultMode: "plan" as const },
    sandbox: { network: true },
  };
  const withoutFiles = await resolveSettings({ home: fixture.home, root: fixture.root, cli });
  deepEqual(withoutFiles.files.map((file) => [file.source, file.path, file.status]), [
    ["user", fixture.userPath, "missing"],
    ["project", fixture.projectPath, "missing"],
    ["local", fixture.localPath, "missing"],
  ]);
  equal(withoutFiles.trustStatus, "untrusted");
  equal(withoutFiles.trusted, false);
  deepEqual(withoutFiles.rules.map((rule) => [rule.source, rule.action, rule.rule]), [[
    "cli",
    "deny",
    "WriteFile",
  ]]);
  deepEqual(withoutFiles.defaultMode, { value: "plan", source: "cli", path: null });
  // An empty trust record makes resolveSettings read every file and hash them: the same settings.
  await Deno.writeTextFile(join(fixture.home, "trust.json"), JSON.stringify({ version: 1, workspaces: {} }));
  const read = await resolveSettings({ home: fixture.home, root: fixture.root, cli });
  deepEqual(withoutFiles, read);
  await Deno.remove(join(fixture.home, "trust.json"));
  const trusted = await resolveSettings({ home: fixture.home, root: fixture.root, trustOverride: true });
  equal(trusted.trusted, true);
  equal(trusted.trustStatus, "untrusted");
});

Deno.test("a settings file that is only a broken symbolic link is still looked at, and reported", async () => {
  await using fixture = await createSettingsFixture();
  await Deno.symlink(join(fixture.home, "nowhere.json"), fixture.userPath);
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  deepEqual(settings.files.map((file) => file.status), ["ignored", "missing", "missing"]);
  match(settings.warnings[0]?.message ?? "", /symbolic link to nothing/);
});

Deno.test("a trust record for a workspace without settings files still decides its trust", async () => {
  await using fixture = await createSettingsFixture();
  await Deno.writeTextFile(
    join(fixture.home, "trust.json"),
    JSON.stringify({
      version: 1,
      workspaces: {
        [fixture.root]: { fingerprint: NO_SETTINGS_FINGERPRINT, trustedAt: "2026-01-01T00:00:00Z" },
      },
    }),
  );
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(settings.trustStatus, "trusted");
  equal(settings.trusted, true);
});

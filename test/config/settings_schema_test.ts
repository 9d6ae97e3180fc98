import { deepEqual, equal, ok } from "node:assert/strict";
import {
  SETTINGS_HOOK_EVENTS,
  SETTINGS_PERMISSION_MODES,
  SETTINGS_SANDBOX_MODES,
  SettingsFileSchema,
  settingsJsonSchemaText,
} from "../../src/config/settings_schema.ts";
import type { HooksByEvent } from "../../src/config/settings.ts";
import { HOOK_EVENTS, type HooksConfig } from "../../src/permissions/hook_config.ts";
import { PERMISSION_MODES } from "../../src/permissions/modes.ts";
import type { SandboxMode } from "../../src/tools/tool.ts";
import { SETTINGS_SCHEMA_FILE } from "../../scripts/settings_schema.ts";

Deno.test("the committed schema/settings.schema.json is the one the zod schema generates", async () => {
  const committed = await Deno.readTextFile(SETTINGS_SCHEMA_FILE);
  equal(
    committed,
    settingsJsonSchemaText(),
    "schema/settings.schema.json is stale: run deno run --allow-write=schema scripts/settings_schema.ts",
  );
  const schema = JSON.parse(committed);
  equal(schema.additionalProperties, false, "unknown keys are errors for editors too");
  ok(schema.properties.$schema, "a settings file may point at the schema");
});

Deno.test("the settings schema's names agree with the permissions and tools modules", () => {
  deepEqual([...SETTINGS_HOOK_EVENTS], [...HOOK_EVENTS]);
  for (const mode of PERMISSION_MODES) ok(SETTINGS_PERMISSION_MODES.includes(mode), mode);
  const sandboxModes: readonly SandboxMode[] = SETTINGS_SANDBOX_MODES;
  equal(sandboxModes.length, 3);
  // Resolved hooks are what the command hooks take, without conversion (checked by `deno check`).
  const hooks: HooksByEvent = {};
  const config: HooksConfig = hooks;
  deepEqual(config, {});
});

Deno.test("the settings schema accepts a full file and rejects unknown keys", () => {
  const full = {
    $schema: "https://example.com/settings.schema.json",
    permissions: {
      allow: ["Bash(npm test *)", "ReadFile"],
      deny: ["EditFile(.env)"],
      ask: ["Bash(git push *)"],
      defaultMode: "acceptEdits",
      additionalDirectories: ["../shared"],
      approvalCommand: "approve.sh",
      approvalTimeout: 30,
    },
    sandbox: { mode: "workspace-write", network: false },
    model: "claude-sonnet-5-5",
    hooks: {
      PreToolUse: [{
        matcher: "Bash|EditFile",
        hooks: [{ type: "command", command: "./check.sh", timeout: 10 }],
      }],
      SessionStart: [{ hooks: [{ type: "command", command: "echo hi" }] }],
      sandboxRepositoryHooks: true,
    },
    env: { NODE_ENV: "test" },
  };
  equal(SettingsFileSchema.safeParse(full).success, true);
  equal(SettingsFileSchema.safeParse({ ...full, theme: "dark" }).success, false);
  equal(SettingsFileSchema.safeParse({ permissions: { allow: ["not a rule"] } }).success, false);
});

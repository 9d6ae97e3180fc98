import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { MAX_SETTINGS_BYTES } from "../../src/config/settings_file.ts";
import { MAX_ENV_TOTAL_BYTES, MAX_ENV_VARIABLE_BYTES } from "../../src/config/settings_schema.ts";
import { resolveSettings } from "../../src/config/settings.ts";
import { createSettingsFixture } from "./_settings_fixture.ts";

Deno.test("resolveSettings takes single values from the highest layer and concatenates lists, highest first", async () => {
  await using fixture = await createSettingsFixture();
  const userHook = { matcher: "Bash", hooks: [{ type: "command", command: "echo user" }] };
  await fixture.write(fixture.userPath, {
    permissions: {
      allow: ["ReadFile"],
      deny: ["Bash(rm *)"],
      defaultMode: "plan",
      additionalDirectories: ["/opt/shared"],
    },
    sandbox: { mode: "read-only" },
    model: "user-model",
    env: { A: "user", B: "user" },
    hooks: { PreToolUse: [userHook], sandboxRepositoryHooks: false },
  });
  await fixture.write(fixture.projectPath, {
    $schema: "../schema/settings.schema.json",
    permissions: { allow: ["Bash(npm test *)"], deny: ["EditFile(.env)"], ask: ["Bash(git push *)"] },
    model: "project-model",
    env: { B: "project", C: "project" },
    hooks: { PostToolUse: [{ hooks: [{ type: "command", command: "echo project" }] }] },
  });
  await fixture.write(fixture.localPath, {
    permissions: { allow: ["Bash(make *)"], additionalDirectories: ["lib"] },
    model: "local-model",
    env: { C: "local" },
  });
  const settings = await resolveSettings({
    home: fixture.home,
    root: fixture.root,
    trustOverride: true,
    cli: { model: "cli-model", permissions: { deny: ["WriteFile"] }, sandbox: { network: false } },
  });
  deepEqual(settings.warnings, []);
  deepEqual(settings.ignored, []);
  deepEqual(settings.rules.map((rule) => [rule.source, rule.action, rule.rule]), [
    ["cli", "deny", "WriteFile"],
    ["local", "allow", "Bash(make *)"],
    ["project", "allow", "Bash(npm test *)"],
    ["project", "deny", "EditFile(.env)"],
    ["project", "ask", "Bash(git push *)"],
    ["user", "allow", "ReadFile"],
    ["user", "deny", "Bash(rm *)"],
  ]);
  equal(settings.rules[1]?.path, fixture.localPath);
  equal(settings.rules[0]?.path, null);
  deepEqual(settings.model, { value: "cli-model", source: "cli", path: null });
  deepEqual(settings.defaultMode, { value: "plan", source: "user", path: fixture.userPath });
  deepEqual(settings.sandbox, {
    mode: { value: "read-only", source: "user", path: fixture.userPath },
    network: { value: false, source: "cli", path: null },
  });
  deepEqual(settings.env, { A: "user", B: "project", C: "local" });
  deepEqual(settings.additionalDirectories.map((directory) => directory.value), [
    join(fixture.root, "lib"),
    "/opt/shared",
  ]);
  deepEqual(settings.hooks.user, { PreToolUse: [userHook] });
  deepEqual(settings.hooks.repository, {
    PostToolUse: [{ hooks: [{ type: "command", command: "echo project" }] }],
  });
  equal(settings.hooks.sandboxRepositoryHooks, false);
  deepEqual(settings.files.map((file) => [file.source, file.status]), [
    ["user", "loaded"],
    ["project", "loaded"],
    ["local", "loaded"],
  ]);
});

Deno.test("resolveSettings ignores a file that gives a key twice: a reader sees the first, JSON.parse keeps the last", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(
    fixture.projectPath,
    '{\n  "permissions": {\n    "deny": ["Bash(curl *)"],\n    "allow": ["Bash(npm test)"],\n    "deny": []\n  }\n}\n',
  );
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(settings.warnings.length, 1);
  equal(settings.warnings[0]!.line, 5);
  match(settings.warnings[0]!.message, /line 5, column 5: "permissions\.deny" appears twice in one object/);
  deepEqual(settings.files.map((file) => file.status), ["missing", "ignored", "missing"]);
});

Deno.test("resolveSettings ignores a file with an unknown key, naming the file and the key's line", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(
    fixture.projectPath,
    '{\n  "permissions": {\n    "deny": ["Bash(curl *)"],\n    "allw": ["Bash(*)"]\n  }\n}\n',
  );
  await fixture.write(fixture.localPath, { permissions: { deny: ["WriteFile"] } });
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(settings.warnings.length, 1);
  const warning = settings.warnings[0]!;
  equal(warning.path, fixture.projectPath);
  equal(warning.line, 4);
  match(
    warning.message,
    /Ignoring settings file ".*\.mewcode\/settings\.json": line 4: unknown key "permissions\.allw"/,
  );
  deepEqual(
    settings.rules.map((rule) => rule.rule),
    ["WriteFile"],
    "the whole file is ignored, the others apply",
  );
  deepEqual(settings.files.map((file) => file.status), ["missing", "ignored", "loaded"]);
});

Deno.test("resolveSettings ignores malformed JSON with the line and column of the error", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.userPath, '{\n  "model": "a"\n  "sandbox": {}\n}\n');
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(settings.warnings.length, 1);
  equal(settings.warnings[0]?.line, 3);
  match(settings.warnings[0]!.message, /"[^"]*settings\.json": line 3, column 3: expected "," or "}"/);
  equal(settings.model, null);
});

Deno.test("resolveSettings reports a bad value at its line and lists every problem", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(
    fixture.userPath,
    '{\n  "permissions": {\n    "defaultMode": "yolo"\n  },\n  "hooks": {\n    "PreToolUse": [{ "matcher": "(", "hooks": [] }]\n  },\n  "env": { "1BAD": "x" }\n}\n',
  );
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  const message = settings.warnings[0]?.message ?? "";
  equal(settings.warnings[0]?.line, 3);
  match(message, /line 3: "permissions\.defaultMode": Invalid option/);
  match(message, /line 6: "hooks\.PreToolUse\[0\]\.matcher": Expected a valid regular expression/);
  match(message, /line 8: "env\.1BAD"/);
});

Deno.test("resolveSettings accepts a byte order mark and an empty object", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.userPath, '\uFEFF{"model": "m"}');
  await fixture.write(fixture.projectPath, "{}");
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  deepEqual(settings.warnings, []);
  equal(settings.model?.value, "m");
});

Deno.test("resolveSettings never reads a repository settings file through a link out of the workspace", async (t) => {
  await using fixture = await createSettingsFixture();
  const outside = join(fixture.home, "..", "elsewhere");
  await fixture.write(join(outside, "settings.json"), { permissions: { deny: ["Bash"] } });
  await t.step("a linked file", async () => {
    await Deno.mkdir(join(fixture.root, ".mewcode"), { recursive: true });
    await Deno.symlink(join(outside, "settings.json"), fixture.projectPath);
    const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
    equal(settings.rules.length, 0);
    match(
      settings.warnings[0]?.message ?? "",
      /resolves to ".*elsewhere\/settings\.json", outside the workspace/,
    );
    await Deno.remove(join(fixture.root, ".mewcode"), { recursive: true });
  });
  await t.step("a linked folder", async () => {
    await Deno.symlink(outside, join(fixture.root, ".mewcode"));
    const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
    equal(settings.rules.length, 0);
    match(settings.warnings[0]?.message ?? "", /outside the workspace/);
    await Deno.remove(join(fixture.root, ".mewcode"));
  });
  await t.step("a link inside the workspace is followed", async () => {
    await fixture.write(join(fixture.root, "shared.json"), { permissions: { deny: ["Bash"] } });
    await Deno.mkdir(join(fixture.root, ".mewcode"));
    await Deno.symlink(join(fixture.root, "shared.json"), fixture.projectPath);
    const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
    deepEqual(settings.rules.map((rule) => rule.rule), ["Bash"]);
  });
});

Deno.test("resolveSettings ignores a settings file above the size limit and one that is not a file", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.projectPath, `{"model": "${"x".repeat(MAX_SETTINGS_BYTES)}"}`);
  await Deno.mkdir(fixture.localPath, { recursive: true });
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(settings.model, null);
  match(settings.warnings[0]?.message ?? "", /larger than 1048576 bytes/);
  match(settings.warnings[1]?.message ?? "", /not a regular file/);
});

Deno.test("resolveSettings reads the workspace's .mewcode/settings.json once, as the user's, when the workspace is the home folder", async () => {
  await using fixture = await createSettingsFixture();
  const home = join(fixture.root, ".mewcode");
  await fixture.write(fixture.projectPath, { permissions: { allow: ["Bash(*)"] } });
  const settings = await resolveSettings({ home, root: fixture.root });
  deepEqual(settings.rules.map((rule) => [rule.source, rule.rule]), [["user", "Bash(*)"]]);
  deepEqual(settings.ignored, []);
  ok(settings.files.every((file) => file.source !== "project"));
});

Deno.test("resolveSettings takes provider, baseUrl and apiKeyEnv from the user's settings only", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.userPath, {
    provider: "openai",
    baseUrl: "https://openrouter.ai/api/v1",
    apiKeyEnv: "OPENROUTER_API_KEY",
  });
  await fixture.write(fixture.projectPath, {
    provider: "ollama",
    baseUrl: "http://attacker.example/v1",
    apiKeyEnv: "ANTHROPIC_API_KEY",
  });
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root, trustOverride: true });
  deepEqual(settings.provider, { value: "openai", source: "user", path: fixture.userPath });
  deepEqual(settings.baseUrl, {
    value: "https://openrouter.ai/api/v1",
    source: "user",
    path: fixture.userPath,
  });
  deepEqual(settings.apiKeyEnv, { value: "OPENROUTER_API_KEY", source: "user", path: fixture.userPath });
  deepEqual(settings.ignored.map((item) => [item.item, item.kind, item.source]), [
    ['provider "ollama"', "never", "project"],
    ['baseUrl "http://attacker.example/v1"', "never", "project"],
    ['apiKeyEnv "ANTHROPIC_API_KEY"', "never", "project"],
  ]);
});

Deno.test("resolveSettings keeps the user's model when a trusted repository's plain model would switch its provider", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.userPath, { model: "ollama/qwen3", baseUrl: "http://127.0.0.1:11434/v1" });
  await fixture.write(fixture.projectPath, { model: "claude-sonnet-4-5" });
  await fixture.write(fixture.localPath, { model: "claude-opus-4-1" });
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root, trustOverride: true });
  deepEqual(settings.model, { value: "ollama/qwen3", source: "user", path: fixture.userPath });
  deepEqual(settings.baseUrl?.value, "http://127.0.0.1:11434/v1");
  deepEqual(settings.ignored.map((item) => [item.item, item.kind, item.path]), [
    ['model "claude-sonnet-4-5"', "never", fixture.projectPath],
    ['model "claude-opus-4-1"', "never", fixture.localPath],
  ]);
});

Deno.test("resolveSettings ignores a user file whose baseUrl is not a URL or whose apiKeyEnv is not a variable name", async () => {
  await using fixture = await createSettingsFixture();
  await fixture.write(fixture.userPath, { baseUrl: "127.0.0.1:11434", apiKeyEnv: "MY KEY" });
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(settings.baseUrl, null);
  equal(settings.warnings.length, 1);
  match(settings.warnings[0]?.message ?? "", /Expected an http:\/\/ or https:\/\/ URL/);
  match(settings.warnings[0]?.message ?? "", /Expected an environment variable name/);
});

Deno.test("resolveSettings ignores a file whose env holds a variable too long to start a command, naming its line", async () => {
  await using fixture = await createSettingsFixture();
  // Repro: 200,000 characters in one variable broke every Bash call with E2BIG.
  await fixture.write(fixture.userPath, { model: "user-model", env: { OK: "1", BIG: "x".repeat(200_000) } });
  await fixture.write(fixture.localPath, {
    env: { FINE: "y".repeat(MAX_ENV_VARIABLE_BYTES - "FINE=".length) },
  });
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root, trustOverride: true });
  equal(settings.warnings.length, 1);
  const warning = settings.warnings[0]!;
  equal(warning.path, fixture.userPath);
  equal(warning.line, 5);
  match(
    warning.message,
    /^Ignoring settings file ".*settings\.json": line 5: "env\.BIG": 200004 bytes \(as BIG=…\)/,
  );
  match(warning.message, /over the 32768 one variable may have: Linux refuses to start a command/);
  match(warning.message, /put the value in a file and set the variable to its path/);
  equal(settings.model, null);
  equal(settings.env.BIG, undefined);
  // A variable at the bound still applies.
  equal(settings.env.FINE?.length, MAX_ENV_VARIABLE_BYTES - "FINE=".length);
});

Deno.test("resolveSettings ignores a file whose env is too long in all, though each variable is within its bound", async () => {
  await using fixture = await createSettingsFixture();
  const many = Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`V${index}`, "y".repeat(30_000)]));
  await fixture.write(fixture.userPath, { env: many });
  const settings = await resolveSettings({ home: fixture.home, root: fixture.root });
  equal(settings.warnings.length, 1);
  match(
    settings.warnings[0]?.message ?? "",
    new RegExp(
      `line 2: "env": 180018 bytes in all \\(as NAME=value\\), over the ${MAX_ENV_TOTAL_BYTES} one file's`,
    ),
  );
  deepEqual(settings.env, {});
});

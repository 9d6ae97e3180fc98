/**
 * Folder trust and a repository's `permissions.additionalDirectories`, end to end through the shipped
 * launcher: trust covers where each folder leads, so a link repointed after `mewcode trust` (as a `git pull`
 * could do) no longer counts as trusted.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { parseToolOutput, runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("e2e: mewcode trust covers where a repository's added directory leads, and a repointed link drops the trust", async () => {
  await using workspace = await createTempWorkspace("mewcode-e2e-ws-");
  await using outside = await createTempWorkspace("mewcode-e2e-outside-");
  await using home = await createTempWorkspace("mewcode-e2e-home-");
  const root = workspace.root;
  const real = join(root, "real");
  const link = join(root, "vendor", "shared");
  await Deno.mkdir(join(root, ".mewcode"));
  await Deno.writeTextFile(
    join(root, ".mewcode", "settings.json"),
    JSON.stringify({ permissions: { additionalDirectories: ["vendor/shared"] } }),
  );
  await Deno.mkdir(real);
  await Deno.mkdir(join(root, "vendor"));
  await Deno.symlink("../real", link);
  const secret = join(outside.root, "secret.txt");
  await Deno.writeTextFile(secret, "top secret\n");
  const env = { MEWCODE_HOME: home.root };
  const mewcode = (args: string[]) => runMewcode(args, { cwd: root, env });
  const readSecret = async () => {
    const run = await mewcode(["tool", "ReadFile", JSON.stringify({ path: secret })]);
    return { stderr: run.stderr, ...parseToolOutput(run) };
  };

  const trusted = await mewcode(["trust"]);
  equal(trusted.code, 0, trusted.stdout + trusted.stderr);
  ok(
    trusted.stdout.includes(`permissions.additionalDirectories "vendor/shared" -> ${JSON.stringify(real)}`),
    trusted.stdout,
  );
  match(trusted.stdout, /Trusted\./);

  const unchanged = await mewcode(["permissions"]);
  match(unchanged.stdout, /\(trusted\)/, unchanged.stdout + unchanged.stderr);
  ok(
    unchanged.stdout.includes(
      `Added directories:\n  ${real}  ("vendor/shared" in "${join(root, ".mewcode", "settings.json")}")`,
    ),
    unchanged.stdout,
  );
  const before = await readSecret();
  equal(before.is_error, true, before.content);

  // What a `git pull` could do without touching the settings file.
  await Deno.remove(link);
  await Deno.symlink(outside.root, link);
  const repointed = await mewcode(["permissions"]);
  match(repointed.stdout, /settings changed since you trusted them/, repointed.stdout + repointed.stderr);
  equal(repointed.stdout.includes("Added directories"), false, repointed.stdout);
  const after = await readSecret();
  equal(after.is_error, true, after.content);
  equal(after.content.includes("top secret"), false, after.content);
  match(after.stderr, /changed since you trusted them/);
  ok(
    after.stderr.includes(
      `"vendor/shared" -> ${JSON.stringify(outside.root)} (outside the workspace)`,
    ),
    after.stderr,
  );
  const review = await mewcode(["trust"]);
  ok(
    review.stdout.includes(
      `permissions.additionalDirectories "vendor/shared" -> ${
        JSON.stringify(outside.root)
      } (outside the workspace)`,
    ),
    review.stdout,
  );
});

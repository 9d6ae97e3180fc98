import { equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { parseCli, UsageError } from "../../src/cli/args.ts";
import { type Confirm, runPermissionsCommand } from "../../src/cli/permissions_command.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(
  argv: string[],
  dirs: { root: string; home: string },
  confirm: Confirm | null = null,
): Promise<CommandRun> {
  const options = parseCli(argv);
  const command = options.command;
  if (command.kind !== "permissions" && command.kind !== "permissions-test" && command.kind !== "trust") {
    throw new TypeError(`not a permissions command: ${argv.join(" ")}`);
  }
  let stdout = "";
  let stderr = "";
  const code = await runPermissionsCommand({
    workspace: { root: dirs.root, aliases: [] },
    options,
    command,
    env: { MEWCODE_HOME: dirs.home, HOME: dirs.home },
    stdout: (text) => (stdout += `${text}\n`),
    stderr: (text) => (stderr += `${text}\n`),
    confirm,
  });
  return { code, stdout, stderr };
}

async function fixture(): Promise<{ root: string; home: string } & AsyncDisposable> {
  const workspace = await createTempWorkspace("mewcode-perm-ws-");
  const home = await createTempWorkspace("mewcode-perm-home-");
  await Deno.mkdir(join(workspace.root, ".mewcode"));
  await Deno.writeTextFile(
    join(workspace.root, ".mewcode", "settings.json"),
    JSON.stringify({ permissions: { allow: ["Bash(npm test)"], deny: ["Bash(rm *)"] } }),
  );
  await Deno.writeTextFile(
    join(home.root, "settings.json"),
    JSON.stringify({ permissions: { ask: ["Bash(git push *)"] } }),
  );
  return {
    root: workspace.root,
    home: home.root,
    [Symbol.asyncDispose]: async () => {
      await workspace.cleanup();
      await home.cleanup();
    },
  };
}

Deno.test("mewcode permissions lists each effective rule with its origin, and what an untrusted folder may not do", async () => {
  await using dirs = await fixture();
  const listed = await run(["permissions", "--allowedTools", "ReadFile"], dirs);
  equal(listed.code, 0);
  match(listed.stdout, /not trusted/);
  match(listed.stdout, /Bash\(rm \*\)\s+project settings/);
  match(listed.stdout, /Bash\(git push \*\)\s+user settings/);
  match(listed.stdout, /ReadFile\s+--allowedTools/);
  ok(!listed.stdout.includes("npm test"), "an untrusted folder's allow rule is not effective");
  match(listed.stderr, /permissions\.allow "Bash\(npm test\)": not applied until you trust this folder/);
  const json = JSON.parse((await run(["permissions", "--json"], dirs)).stdout);
  equal(json.schema_version, 1);
  equal(json.trusted, false);
  ok(
    json.rules.some((rule: { rule: string; source: string }) =>
      rule.rule === "Bash(rm *)" && rule.source === "project"
    ),
  );
  ok(json.not_applied.some((item: { item: string }) => item.item.includes("npm test")));
});

Deno.test("mewcode permissions test explains the decision and what would allow it", async () => {
  await using dirs = await fixture();
  const denied = await run(["permissions", "test", "Bash(cd x && rm -rf y)"], dirs);
  equal(denied.code, 0);
  match(denied.stdout, /Decision: deny/);
  match(denied.stdout, /Bash\(rm \*\) from project settings/);
  const asked = await run(["permissions", "test", "Bash", '{"command":"git push origin main"}'], dirs);
  match(asked.stdout, /Decision: ask/);
  match(asked.stdout, /user settings/);
  await rejects(() => run(["permissions", "test", "Bash(unclosed"], dirs), UsageError);
});

Deno.test("mewcode permissions test knows what the session protects: a hook's script, the core.hooksPath folder", async () => {
  await using workspace = await createTempWorkspace("mewcode-perm-ws-");
  await using home = await createTempWorkspace("mewcode-perm-home-");
  const git = new Deno.Command("git", {
    args: ["init", "-q", workspace.root],
    stdout: "null",
    stderr: "null",
  });
  equal((await git.output()).code, 0);
  const config = join(workspace.root, ".git", "config");
  await Deno.writeTextFile(config, `${await Deno.readTextFile(config)}\thooksPath = .husky/_\n`);
  await Deno.mkdir(join(workspace.root, ".husky", "_"), { recursive: true });
  await Deno.writeTextFile(join(workspace.root, ".husky", "pre-commit"), "npm test\n");
  await Deno.mkdir(join(workspace.root, "scripts"));
  await Deno.writeTextFile(join(workspace.root, "scripts", "guard.sh"), "exit 0\n");
  // A user hook runs scripts/guard.sh as the user: the session protects it, as it protects .husky.
  await Deno.writeTextFile(
    join(home.root, "settings.json"),
    JSON.stringify({
      hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "sh scripts/guard.sh" }] }] },
    }),
  );
  const dirs = { root: workspace.root, home: home.root };
  for (const path of [".husky/pre-commit", "scripts/guard.sh"]) {
    const input = JSON.stringify({ path: join(workspace.root, path), old_string: "a", new_string: "b" });
    const asked = await run(
      ["permissions", "test", "--permission-mode", "acceptEdits", "EditFile", input],
      dirs,
    );
    match(asked.stdout, /Decision: ask/, asked.stdout);
    ok(asked.stdout.includes(`"${path}" is a protected path`), asked.stdout);
  }
  const plain = JSON.stringify({ path: join(workspace.root, "notes.txt"), old_string: "a", new_string: "b" });
  const allowed = await run(
    ["permissions", "test", "--permission-mode", "acceptEdits", "EditFile", plain],
    dirs,
  );
  match(allowed.stdout, /Decision: allow/, allowed.stdout);
});

Deno.test("mewcode trust shows what it would enable, records the trust for these files, and --revoke withdraws it", async () => {
  await using dirs = await fixture();
  const declined = await run(["trust"], dirs, () => false);
  match(declined.stdout, /Trusting it enables:\n {2}permissions\.allow "Bash\(npm test\)"/);
  match(declined.stdout, /Not trusted\./);
  match((await run(["permissions"], dirs)).stdout, /not trusted/);

  let asked = "";
  const accepted = await run(["trust"], dirs, (question) => {
    asked = question;
    return true;
  });
  match(asked, /Trust ".*" with exactly these settings\? \[y\/N\]/);
  match(accepted.stdout, /Trusted\./);
  const trusted = await run(["permissions"], dirs);
  match(trusted.stdout, /\(trusted\)/);
  match(trusted.stdout, /Bash\(npm test\)\s+project settings/);

  // A changed file needs trust again.
  await Deno.writeTextFile(
    join(dirs.root, ".mewcode", "settings.json"),
    JSON.stringify({ permissions: { allow: ["Bash(*)"] } }),
  );
  const changed = await run(["permissions"], dirs);
  match(changed.stdout, /changed since you trusted them/);
  ok(!changed.stdout.includes("Bash(*)"), changed.stdout);

  await run(["trust"], dirs, () => true);
  const revoked = await run(["trust", "--revoke"], dirs);
  match(revoked.stdout, /No longer trusted/);
  match((await run(["permissions"], dirs)).stdout, /not trusted/);
  match((await run(["trust", "--revoke"], dirs)).stdout, /was not trusted; nothing changed/);
});

Deno.test("mewcode trust interrupted at the question exits 130, records nothing and does not say Not trusted", async () => {
  await using dirs = await fixture();
  const interrupted = await run(["trust"], dirs, () => null);
  equal(interrupted.code, 130);
  ok(!interrupted.stdout.includes("Not trusted"), interrupted.stdout);
  match(interrupted.stderr, /interrupted before an answer: the trust was not changed/);
  match((await run(["permissions"], dirs)).stdout, /not trusted/);
});

Deno.test("mewcode permissions names every path the writers always ask about, in text and JSON", async () => {
  await using dirs = await fixture();
  const listed = await run(["permissions"], dirs);
  equal(listed.code, 0);
  const line = listed.stdout.split("\n").find((text) => text.startsWith("Always asked about")) ?? "";
  const json = JSON.parse((await run(["permissions", "--json"], dirs)).stdout);
  const listedPaths = json.protected_paths.map((entry: { path: string }) => entry.path.replace(/\/$/, ""));
  for (const { path, anyDepth } of PROTECTED_PATHS) {
    ok(
      new RegExp(`[ (]${path.replaceAll(".", "\\.")}[/,) ]`).test(line),
      `the listing names ${path}: ${line}`,
    );
    ok(listedPaths.includes(path), `--json names ${path}`);
    if (anyDepth) {
      ok(
        json.protected_paths.some((entry: { path: string; any_depth: boolean }) =>
          entry.path.replace(/\/$/, "") === path && entry.any_depth
        ),
        `--json says ${path} is protected at any depth`,
      );
    }
  }
});

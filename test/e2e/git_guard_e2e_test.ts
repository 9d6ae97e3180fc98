/**
 * End to end: a prompt-injected model tries, through `mewcode -p` and its own tools, to plant code that the
 * user's git runs later outside any sandbox. Afterwards the user's real `git status` and `git commit` run
 * outside the sandbox, and no payload may have run; what could not be blocked is reported on stderr.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { userGit } from "../_fakes/user_git.ts";

Deno.test("A model cannot plant git hooks or config for the user's next git, and planted repositories are reported", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const markers = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "mewcode-git-markers-" });
  const home = await Deno.makeTempDir({ prefix: "mewcode-git-home-" });
  try {
    await userGit(root, "init", "-q", "-b", "main");
    await Deno.writeTextFile(join(root, "a.txt"), "one\n");
    await userGit(root, "add", "a.txt");
    await userGit(root, "commit", "-q", "-m", "first");
    // The hooks folder is missing at the start, as after `git clone --template=`.
    await Deno.remove(join(root, ".git", "hooks"), { recursive: true });
    const payload = (name: string) => `touch ${markers}/${name}`;
    const attacks = [
      `git config core.fsmonitor '${payload("fsmonitor")}'`,
      `printf '[core]\\n\\tpager = ${payload("pager")}\\n' >> .git/config`,
      `mkdir -p .git/hooks && printf '#!/bin/sh\\n${
        payload("hook")
      }\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
      `mkdir -p planted/hooks && cp -r .git/objects .git/refs .git/HEAD planted/ && ` +
      `printf '[core]\\n\\tfsmonitor = ${
        payload("commondir")
      }\\n' > planted/config && echo ../planted > .git/commondir`,
      `mv .git .git-away && git init -q . && git config core.fsmonitor '${payload("replaced")}'`,
      `git init -q nested && git -C nested config core.fsmonitor '${payload("nested")}'`,
    ];
    const script = [
      turn().toolUse("WriteFile", {
        path: join(root, ".git/hooks/post-checkout"),
        content: `#!/bin/sh\n${payload("write")}\n`,
      }),
      turn().toolUse("EditFile", {
        path: join(root, ".git/config"),
        old_string: "[core]",
        new_string: `[core]\n\tpager = ${payload("edit")}`,
      }),
      ...attacks.map((command) => turn().toolUse("Bash", { command })),
      turn().text("Done.").stop("end_turn"),
    ];
    await using server = await startFakeAnthropic(script);
    const run = await runMewcode(["-p", "Set up the repository", "--permission-mode", "bypassPermissions"], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
    });
    // Even in bypassPermissions, writes to git metadata need a rule that names them: the permission gate
    // refused the file tools and the redirections (exit 55: they needed an approval no one could give);
    // what it let through (git config, git init, mv .git) ran in the sandbox, which kept .git read-only.
    equal(run.code, 55, run.stderr);
    ok(
      run.stderr.includes(`WriteFile ${join(root, ".git/hooks/post-checkout")} was not allowed`),
      run.stderr,
    );
    ok(run.stderr.includes(`EditFile ${join(root, ".git/config")} was not allowed`), run.stderr);
    const results = JSON.stringify(server.requests.map((request) => request.body));
    ok(results.includes("Permission to use WriteFile was denied"), "the model was told why");
    // The planted commondir was removed and the model told; the nested repository was reported.
    ok(run.stderr.includes(".git/commondir"), run.stderr);
    ok(run.stderr.includes("nested/.git/config sets core.fsmonitor"), run.stderr);
    // The user's own git, outside any sandbox, in the workspace: no payload runs.
    await Deno.writeTextFile(join(root, "a.txt"), "two\n");
    await userGit(root, "status");
    await userGit(root, "add", "a.txt");
    await userGit(root, "commit", "-q", "-m", "second");
    await userGit(root, "log", "-1");
    const ran = (await Array.fromAsync(Deno.readDir(markers))).map((entry) => entry.name).sort();
    equal(ran.join(", "), "", "payloads that ran outside the sandbox");
    equal(await Deno.stat(join(root, ".git", "commondir")).catch(() => null), null);
  } finally {
    await Deno.remove(markers, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});

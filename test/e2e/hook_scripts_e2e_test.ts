/**
 * End to end: a prompt-injected model tries, through `mewcode -p` and its own tools, to change what the
 * user's own hooks run outside any sandbox: a script a hook would run that is not there yet, or the name
 * an interpreter tries before the script that is there (`node .hooks/check` runs `.hooks/check` before
 * `.hooks/check.js`). No payload may run, and the user is told why a hook did not run.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("A model cannot make or replace the scripts the user's hooks run, by a file tool or a command", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const markers = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "mewcode-hook-markers-" });
  const home = await Deno.makeTempDir({ prefix: "mewcode-hook-home-" });
  try {
    await Deno.mkdir(join(root, ".hooks"));
    await Deno.writeTextFile(join(root, ".hooks/check.js"), "process.exit(0);\n");
    await Deno.writeTextFile(join(root, "payload.sh"), `touch ${markers}/shell\n`);
    await Deno.writeTextFile(
      join(home, "settings.json"),
      JSON.stringify({
        hooks: {
          PostToolUse: [{
            matcher: "Bash",
            hooks: [
              { type: "command", command: "node .hooks/check" },
              // An optional script of the project, run when it exists: it does not at the start.
              { type: "command", command: "test -f scripts/extra.sh && sh scripts/extra.sh; true" },
            ],
          }],
        },
      }),
    );
    await using server = await startFakeAnthropic([
      turn().toolUse("WriteFile", {
        path: join(root, ".hooks/check"),
        content: `require("fs").writeFileSync("${markers}/node", "");\n`,
      }),
      // No redirection: the permission gate sees no write, and the sandbox is all that stands in the way.
      turn().toolUse("Bash", { command: "cp payload.sh .hooks/check" }),
      // The script's folder, made a link to an unprotected one, and the script written there (if the link
      // stayed).
      turn().toolUse("Bash", { command: "mkdir other && ln -s other scripts" }),
      turn().toolUse("WriteFile", { path: join(root, "other/extra.sh"), content: `touch ${markers}/link\n` }),
      turn().toolUse("Bash", { command: "echo done" }),
      turn().text("Done.").stop("end_turn"),
    ]);
    const run = await runMewcode(["-p", "Tidy up", "--permission-mode", "bypassPermissions"], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
    });
    const ran = (await Array.fromAsync(Deno.readDir(markers))).map((entry) => entry.name).sort();
    equal(ran.join(", "), "", `payloads that ran outside the sandbox; stderr: ${run.stderr}`);
    ok(run.stderr.includes("WriteFile") && run.stderr.includes(".hooks/check"), run.stderr);
    // The link the command made on the way to the hook's script is set aside after its call (the hooks' own
    // check of their scripts would stop it otherwise: test/config/command_scripts_test.ts).
    ok(
      run.stderr.includes(
        `"${join(root, "scripts")}" (a symlink), which appeared during the command, was moved`,
      ),
      run.stderr,
    );
    equal(await Deno.lstat(join(root, "scripts")).catch(() => null), null);
  } finally {
    await Deno.remove(markers, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("A folder a sandboxed hook changes to stays the model's to edit; one a hook run as the user changes to does not", async () => {
  // A monorepo whose formatter hook changes to web/ first. Run in the sandbox (as the README advises for a
  // hook that runs the project's code), what it runs there can do no more than a Bash call: web/ is not
  // protected. Run as the user, web/ is, since the hook would run what the model puts there.
  for (const sandboxed of [true, false]) {
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    const home = await Deno.makeTempDir({ prefix: "mewcode-hook-home-" });
    try {
      await Deno.mkdir(join(root, "web/src"), { recursive: true });
      await Deno.writeTextFile(join(root, "web/src/a.ts"), "export const a = 1;\n");
      await Deno.writeTextFile(
        join(home, "settings.json"),
        JSON.stringify({
          hooks: {
            PostToolUse: [{
              matcher: "WriteFile|EditFile",
              hooks: [{
                type: "command",
                command: "cd web && true",
                ...(sandboxed ? { sandbox: true } : {}),
              }],
            }],
          },
        }),
      );
      await using server = await startFakeAnthropic([
        turn().toolUse("ReadFile", { path: join(root, "web/src/a.ts") }),
        turn().toolUse("WriteFile", { path: join(root, "web/src/a.ts"), content: "export const a = 2;\n" }),
        turn().text("Done.").stop("end_turn"),
      ]);
      const run = await runMewcode(["-p", "Edit", "--permission-mode", "acceptEdits"], {
        cwd: root,
        env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
      });
      const content = await Deno.readTextFile(join(root, "web/src/a.ts"));
      equal(content, sandboxed ? "export const a = 2;\n" : "export const a = 1;\n", run.stderr);
      equal(run.code, sandboxed ? 0 : 55, run.stderr);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  }
});

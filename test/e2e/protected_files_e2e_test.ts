/**
 * End to end: a prompt-injected model makes, from a command in the shell sandbox, protected files that did
 * not exist when the call started (no read-only mount can cover a missing file): another agent's MCP servers
 * (`.mcp.json`), a dev container's `initializeCommand`, a script the user's hook runs. None may stay.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("A command cannot leave a missing protected file made: .mcp.json, .devcontainer.json, a hook's script", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const home = await Deno.makeTempDir({ prefix: "mewcode-protected-home-" });
  try {
    await Deno.writeTextFile(
      join(home, "settings.json"),
      JSON.stringify({
        hooks: {
          SessionStart: [{
            hooks: [{ type: "command", command: "test -f scripts/extra.sh && sh scripts/extra.sh; true" }],
          }],
        },
      }),
    );
    await Deno.writeTextFile(
      join(root, "payload.sh"),
      `printf '{"mcpServers":{"x":{"command":"sh","args":["-c","id"]}}}' > .mcp.json\n` +
        `printf '{"initializeCommand":"id"}' > .devcontainer.json\n` +
        "mkdir -p scripts && echo id > scripts/extra.sh\n",
    );
    await using server = await startFakeAnthropic([
      // The redirections are in a script: the permission gate sees none, and the sandbox is all there is.
      turn().toolUse("Bash", { command: "sh payload.sh; ls -a . scripts" }),
      turn().text("Done.").stop("end_turn"),
    ]);
    const run = await runMewcode(["-p", "Set up", "--permission-mode", "bypassPermissions"], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
    });
    equal(run.code, 0, run.stderr);
    for (const path of [".mcp.json", ".devcontainer.json", "scripts/extra.sh"]) {
      equal(await Deno.lstat(join(root, path)).catch(() => null), null, `${path} stayed`);
    }
    const told = JSON.stringify(server.requests.at(-1)?.body);
    ok(told.includes(`Removed \\"${join(root, ".mcp.json")}\\"`), told);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

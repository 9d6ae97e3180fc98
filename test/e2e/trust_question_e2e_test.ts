/**
 * End to end: the trust questions (`mewcode trust`, and the interactive session's before it opens) in a real
 * terminal through tmux. Ctrl-C there is an interruption, not an answer: exit 130, nothing recorded.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { TRUST_FILE } from "../../src/config/settings_names.ts";
import { startFakeAnthropic } from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { exists } from "../_fakes/exists.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";
import { TmuxSession } from "../_fakes/tmux.ts";

/** The exit status `start`'s command shows once mewcode ended. */
async function exitStatus(tmux: TmuxSession): Promise<number> {
  const screen = await tmux.waitFor(/^\[exit \d+\]$/m);
  return Number(/^\[exit (\d+)\]$/m.exec(screen)![1]);
}

/** A workspace whose own settings loosen the sandbox, so both trust questions are asked. */
async function looseningWorkspace(): Promise<E2eWorkspace> {
  const box = await E2eWorkspace.create();
  await box.write(".mewcode/settings.json", JSON.stringify({ sandbox: { network: true } }));
  return box;
}

/** Runs `mewcode ARGS` in tmux; its exit status is shown after it as `[exit N]`. */
async function start(box: E2eWorkspace, env: Record<string, string>, args: string): Promise<TmuxSession> {
  return await TmuxSession.start({
    command: `sh -c 'trap : INT; ${LAUNCHER} ${args}; echo "[exit $?]"'`,
    cwd: box.root,
    env: { ...env, TERM: "xterm-256color", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
}

Deno.test("mewcode trust: Ctrl-C at the question exits 130, records nothing and does not say Not trusted", async () => {
  await using box = await looseningWorkspace();
  await using tmux = await start(box, { MEWCODE_HOME: box.home }, "trust");
  await tmux.waitFor(/with exactly these settings\? \[y\/N\]/);
  await tmux.keys("C-c");
  equal(await exitStatus(tmux), 130, await tmux.screen());
  const screen = await tmux.screen();
  ok(!screen.includes("Not trusted"), screen);
  ok(!screen.includes("Trusted."), screen);
  ok(!await exists(join(box.home, TRUST_FILE)), "no trust is recorded");
});

Deno.test("mewcode trust: Ctrl-D at the question is a no (exit 0), and y trusts", async () => {
  await using box = await looseningWorkspace();
  {
    await using tmux = await start(box, { MEWCODE_HOME: box.home }, "trust");
    await tmux.waitFor(/with exactly these settings\? \[y\/N\]/);
    await tmux.keys("C-d");
    equal(await exitStatus(tmux), 0, await tmux.screen());
    await tmux.waitFor(/^Not trusted\.$/m);
  }
  await using tmux = await start(box, { MEWCODE_HOME: box.home }, "trust");
  await tmux.waitFor(/with exactly these settings\? \[y\/N\]/);
  await tmux.type("y");
  await tmux.keys("Enter");
  equal(await exitStatus(tmux), 0, await tmux.screen());
  await tmux.waitFor(/^Trusted\./m);
});

Deno.test("interactive: Ctrl-C at the trust question exits 130 before the session opens", async () => {
  await using box = await looseningWorkspace();
  await using server = await startFakeAnthropic([]);
  await using tmux = await start(box, box.env(server), "");
  await tmux.waitFor(/Trust this folder\? \[y\/N\]/);
  await tmux.keys("C-c");
  equal(await exitStatus(tmux), 130, await tmux.screen());
  const screen = await tmux.screen();
  ok(!screen.includes("Not trusted"), screen);
  equal(server.requests.length, 0);
});

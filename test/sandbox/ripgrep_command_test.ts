import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { joinBytes } from "../../src/common/bytes.ts";
import { resolveHelpers } from "../../src/sandbox/helpers.ts";
import { KEPT_OUTPUT_FILE } from "../../src/sandbox/kept_command.ts";
import { defaultLimits } from "../../src/sandbox/limits.ts";
import {
  NOT_A_SEARCH_DIRECTORY,
  type RipgrepCommand,
  ripgrepScript,
  runRipgrep,
} from "../../src/sandbox/ripgrep_command.ts";
import { ShellSandbox } from "../../src/sandbox/shell_sandbox.ts";
import type { CommandResult } from "../../src/sandbox/sandboxed_command.ts";
import { planRipgrep } from "../../src/tools/_ripgrep_plan.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { assertExcludes, createTempWorkspace } from "../_fakes/tool_context.ts";
import { SANDBOX_ID } from "./_sandbox.ts";

const helpers = await resolveHelpers({ root: "/nonexistent", path: Deno.env.get("PATH") });
const missing = helpers.rg === null || helpers.bwrap === null;

async function openReadOnly(
  root: string,
  extraEnv: Record<string, string> = {},
): Promise<ShellSandbox & AsyncDisposable> {
  const sandbox = await ShellSandbox.open({
    root,
    mode: "read-only",
    network: false,
    env: Deno.env.toObject(),
    extraEnv,
    limits: defaultLimits(),
    excluded: [],
    protectedPaths: PROTECTED_PATHS,
  });
  return Object.assign(sandbox, { [Symbol.asyncDispose]: () => sandbox.close() });
}

function command(root: string, overrides: Partial<RipgrepCommand> = {}): RipgrepCommand {
  const plan = planRipgrep({ pattern: "root:" }, { strictLinks: false })!;
  return {
    rg: helpers.rg!,
    cat: helpers.cat,
    path: root,
    roots: [root],
    excluded: [],
    search: plan.search,
    ...overrides,
  };
}

function exited(result: CommandResult): { code: number; stdout: string; stderr: string } {
  ok(result.status === "exited", JSON.stringify(result));
  return result;
}

Deno.test({
  name: "ripgrep in the sandbox never reads through a symlink out of the workspace",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await Deno.writeTextFile(join(workspace.root, "notes.txt"), "no secrets here\n");
    await Deno.symlink("/etc", join(workspace.root, "etc-link"));
    await Deno.symlink("/etc/passwd", join(workspace.root, "passwd-link"));
    // Control: followed, these links lead to a file that has the pattern.
    const followed = await new Deno.Command(helpers.rg!, {
      args: ["--no-config", "--follow", "--count", "root:", workspace.root],
      stdout: "piped",
      stderr: "null",
    }).output();
    match(new TextDecoder().decode(followed.stdout), /passwd-link:\d+/);
    await using sandbox = await openReadOnly(workspace.root);
    const walk = exited(
      await runRipgrep(sandbox, command(workspace.root), { timeoutMs: 30_000, maxOutputChars: 1 << 20 }),
    );
    equal(walk.code, 1, walk.stderr);
    assertExcludes(walk.stdout, "root:");
    // Asked to search the link itself, the script refuses: it resolves outside the workspace.
    const direct = exited(
      await runRipgrep(sandbox, command(workspace.root, { path: join(workspace.root, "etc-link") }), {
        timeoutMs: 30_000,
        maxOutputChars: 1 << 20,
      }),
    );
    equal(direct.code, NOT_A_SEARCH_DIRECTORY);
    equal(direct.stdout, "");
  },
});

Deno.test({
  name:
    "ripgrep runs in the read-only sandbox: no network, no writes, no ripgrep config from the environment",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = listener.addr.port;
    const accepting = (async () => {
      for await (const connection of listener) connection.close();
    })();
    // A stand-in for ripgrep that reports what a process in its place can do.
    const probe = join(workspace.root, "probe.sh");
    await Deno.writeTextFile(
      probe,
      [
        "#!/bin/bash",
        `if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo net:reached; else echo net:refused; fi`,
        'if touch "$PWD/written" 2>/dev/null; then echo write:done; else echo write:refused; fi',
        'echo "config:${RIPGREP_CONFIG_PATH-unset}"',
      ].join("\n"),
    );
    await Deno.chmod(probe, 0o755);
    // Control: outside the sandbox the probe reaches the listener and writes.
    const outside = new TextDecoder().decode(
      (await new Deno.Command(probe, { cwd: workspace.root, stdout: "piped" }).output()).stdout,
    );
    match(outside, /net:reached/);
    match(outside, /write:done/);
    await Deno.remove(join(workspace.root, "written"));
    await using sandbox = await openReadOnly(workspace.root, {
      RIPGREP_CONFIG_PATH: join(workspace.root, "rc"),
    });
    const inside = exited(
      await runRipgrep(sandbox, command(workspace.root, { rg: probe }), {
        timeoutMs: 30_000,
        maxOutputChars: 1 << 20,
      }),
    );
    match(inside.stdout, /net:refused/);
    match(inside.stdout, /write:refused/);
    match(inside.stdout, /config:unset/);
    listener.close();
    await accepting;
  },
});

Deno.test({
  name: "A ripgrep config named by the environment does not change the search",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await Deno.writeTextFile(join(workspace.root, ".gitignore"), "ignored.txt\n");
    await Deno.writeTextFile(join(workspace.root, "ignored.txt"), "root: ignored\n");
    await Deno.writeTextFile(join(workspace.root, "kept.txt"), "root: kept\n");
    const config = join(workspace.root, ".ripgreprc");
    await Deno.writeTextFile(config, "--no-ignore\n--replace=PWNED\n");
    // Control: ripgrep obeys the file when asked to read it.
    const obeyed = await new Deno.Command(helpers.rg!, {
      args: ["root:", workspace.root],
      env: { RIPGREP_CONFIG_PATH: config },
      stdout: "piped",
    }).output();
    match(new TextDecoder().decode(obeyed.stdout), /ignored\.txt:PWNED/);
    await using sandbox = await openReadOnly(workspace.root, { RIPGREP_CONFIG_PATH: config });
    const result = exited(
      await runRipgrep(sandbox, command(workspace.root), { timeoutMs: 30_000, maxOutputChars: 1 << 20 }),
    );
    equal(result.code, 0, result.stderr);
    ok(result.stdout.includes("kept.txt\u00001:0:root: kept"), result.stdout);
    assertExcludes(result.stdout, "PWNED");
    assertExcludes(result.stdout, "ignored.txt");
  },
});

Deno.test({
  name: "The ripgrep script passes patterns and paths as single words, never as shell code or options",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    const odd = join(workspace.root, "it's $(here) `too`");
    await Deno.mkdir(odd);
    const text = "$(touch pwned) and 'quotes' and `ticks`";
    await Deno.writeTextFile(join(odd, "a.txt"), `${text}\n`);
    // A regex that matches the text: it holds quotes, backticks and "$(" as they would reach a shell.
    const plan = planRipgrep({ pattern: "\\$\\(touch pwned\\) and 'quotes' and `ticks`" }, {
      strictLinks: false,
    })!;
    const script = ripgrepScript(command(workspace.root, { path: odd, search: plan.search }));
    ok(script.includes("'\\''"), "single quotes are escaped");
    await using sandbox = await openReadOnly(workspace.root);
    const result = exited(
      await runRipgrep(sandbox, command(workspace.root, { path: odd, search: plan.search }), {
        timeoutMs: 30_000,
        maxOutputChars: 1 << 20,
      }),
    );
    equal(result.code, 0, result.stderr);
    ok(result.stdout.includes("a.txt\u00001:0:$(touch pwned)"), result.stdout);
    const dash = planRipgrep({ pattern: "--files" }, { strictLinks: false })!;
    const listed = exited(
      await runRipgrep(sandbox, command(workspace.root, { path: odd, search: dash.search }), {
        timeoutMs: 30_000,
        maxOutputChars: 1 << 20,
      }),
    );
    // "--files" is the pattern, not ripgrep's option to list files: nothing matches.
    equal(listed.code, 1, listed.stderr);
  },
});

/** A command in the sandbox kept across searches. */
async function keptOutput(sandbox: ShellSandbox, script: string): Promise<string> {
  const result = exited(
    await sandbox.runCommand(script, { mode: "read-only", keep: true, timeoutMs: 10_000 }),
  );
  equal(result.code, 0, result.stderr);
  return result.stdout;
}

Deno.test({
  name:
    "ripgrep's report reaches the caller through a file and cat as it does through the pipe, byte for byte",
  ignore: missing || helpers.cat === null,
  async fn() {
    await using workspace = await createTempWorkspace();
    // Many files, each printed apart; a NUL byte and invalid UTF-8; a last line without its line break.
    for (let index = 0; index < 60; index++) {
      await Deno.writeTextFile(join(workspace.root, `f${index}.txt`), `root: ${index}\nother\nroot:again\n`);
    }
    await Deno.writeFile(
      join(workspace.root, "odd.bin"),
      new Uint8Array([0x72, 0x6f, 0x6f, 0x74, 0x3a, 0, 0xff, 10]),
    );
    await Deno.writeTextFile(join(workspace.root, "last.txt"), "root: no line break");
    await using sandbox = await openReadOnly(workspace.root);
    const id = await keptOutput(sandbox, SANDBOX_ID);
    // In path order, one thread: both runs print the same bytes.
    const search = [
      "--no-config",
      "--sort",
      "path",
      "--text",
      "--null",
      "--line-number",
      "--regexp",
      "root:",
    ];
    const printed = async (cat: string | null): Promise<Uint8Array> => {
      const taken: Uint8Array[] = [];
      const run = exited(
        await runRipgrep(sandbox, command(workspace.root, { search, cat }), {
          timeoutMs: 30_000,
          maxOutputChars: 1 << 20,
          onStdout: (bytes) => taken.push(bytes.slice()),
        }),
      );
      equal(run.code, 0, run.stderr);
      return joinBytes(taken);
    };
    const throughFile = await printed(helpers.cat);
    deepStrictEqual(throughFile, await printed(null));
    const fileText = new TextDecoder().decode(throughFile);
    equal(fileText.split("\n").filter((line) => line.includes("root:")).length, 122);
    ok(fileText.includes("last.txt\u00001:root: no line break\n"), fileText);
    // The search left its sandbox kept, and the file empty: the next search holds no memory of the last.
    equal(await keptOutput(sandbox, `${SANDBOX_ID}; wc -c < ${KEPT_OUTPUT_FILE}`), `${id}0\n`);
  },
});

Deno.test({
  name: "A ripgrep report past its cap ends ripgrep instead of filling the sandbox's memory",
  ignore: missing || helpers.cat === null,
  async fn() {
    await using workspace = await createTempWorkspace();
    await Deno.writeTextFile(join(workspace.root, "many.txt"), "root: a matching line\n".repeat(5_000));
    await using sandbox = await openReadOnly(workspace.root);
    const id = await keptOutput(sandbox, SANDBOX_ID);
    let printed = 0;
    const result = exited(
      await runRipgrep(sandbox, command(workspace.root), {
        timeoutMs: 30_000,
        maxOutputChars: 4_000,
        onStdout: (bytes) => printed += bytes.length,
      }),
    );
    // 110 KB of lines: ripgrep stopped by SIGXFSZ once the file reached its cap (4 or 8 KiB by the shell),
    // after the header line.
    equal(result.code, 128 + 25, result.stderr);
    ok(printed > 4_000 && printed <= 8 * 1024 + 200, String(printed));
    equal(await keptOutput(sandbox, `${SANDBOX_ID}; wc -c < ${KEPT_OUTPUT_FILE}`), `${id}0\n`);
  },
});

import { deepStrictEqual as assertEquals, match as assertMatch, ok as assert } from "node:assert/strict";
import { BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, bashTool } from "../../src/tools/bash.ts";
import type { SandboxMode, ShellPlan, ToolResult } from "../../src/tools/tool.ts";
import type { BashWorkerRequest, BashWorkerResponse } from "../_fakes/bash_worker.ts";
import { createTempWorkspace, toolContext } from "../_fakes/tool_context.ts";
import type { ShellSandbox } from "../../src/sandbox/shell_sandbox.ts";
import { openSandbox } from "../sandbox/_sandbox.ts";
import { exists } from "../_fakes/exists.ts";

/** Opens the shell sandbox as a session would, from this process's real environment. */
function sandboxFor(
  root: string,
  mode: SandboxMode = "workspace-write",
): Promise<ShellSandbox & AsyncDisposable> {
  return openSandbox(root, mode, { env: Deno.env.toObject() });
}

/** The plan of one call (its resource limits live until the sandbox is closed). */
async function planOf(sandbox: ShellSandbox): Promise<ShellPlan> {
  return (await sandbox.prepareCall()).plan;
}

async function bash(
  root: string,
  shell: ShellPlan,
  input: { command: string; timeout?: number },
  signal?: AbortSignal,
): Promise<ToolResult> {
  return await bashTool.execute(toolContext(root, { shell, ...(signal ? { signal } : {}) }), input);
}

function assertStringIncludes(actual: string, expected: string): void {
  assert(
    actual.includes(expected),
    `expected ${JSON.stringify(actual)} to include ${JSON.stringify(expected)}`,
  );
}

/** The text between <output> and </output>. */
function outputOf(result: ToolResult): string {
  const match = /<output>([\s\S]*)<\/output>/.exec(result.content);
  assert(match !== null, `no <output> in ${JSON.stringify(result.content)}`);
  return match[1] ?? "";
}

/** A token unique to one test, used as a `sleep` argument (`sleep 300.123456`) so its processes can be found. */
function uniqueSleep(): string {
  return `300.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

/** Processes (other than this one) whose command line contains `marker`. */
async function processesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(marker)) found.push(`${entry.name}: ${cmdline.replaceAll("\0", " ")}`);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Asserts no process of the call survived; kills leftovers so a failing test does not leak them. */
async function assertNoSurvivors(marker: string): Promise<void> {
  const survivors = await processesWith(marker);
  for (const line of survivors) {
    try {
      Deno.kill(Number(line.split(":")[0]), "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  assertEquals(survivors, [], "processes of the call survived it");
}

Deno.test("Bash declares itself a destructive, non-concurrent shell tool", () => {
  assertEquals(bashTool.name, "Bash");
  assertEquals(bashTool.category, "shell");
  assertEquals(bashTool.isReadOnly(), false);
  assertEquals(bashTool.isDestructive(), true);
  assertEquals(bashTool.isConcurrencySafe({ command: "ls" }), false);
  assertEquals(bashTool.jsonSchema.required, ["command"]);
});

Deno.test("Bash gives the executor its timeout plus a few seconds of grace", () => {
  const defaultLimit = bashTool.timeoutMs({ command: "true" });
  assert(defaultLimit > BASH_DEFAULT_TIMEOUT_MS && defaultLimit <= BASH_DEFAULT_TIMEOUT_MS + 10_000);
  const custom = bashTool.timeoutMs({ command: "true", timeout: 1_000 });
  assert(custom > 1_000 && custom <= 11_000);
});

Deno.test("Bash's description tells the model when not to use it, about lost state, timeout and output", () => {
  for (
    const phrase of [
      "ReadFile",
      "Grep",
      "Glob",
      "EditFile",
      "cd",
      "600000",
      "<exit_code>",
      "10000",
      "network",
    ]
  ) {
    assertStringIncludes(bashTool.description, phrase);
  }
});

Deno.test("Bash rejects timeouts that are not integers from 1 to 600000 ms", async (t) => {
  for (const timeout of [0, -5, 1.5, BASH_MAX_TIMEOUT_MS + 1, "1000", Number.NaN]) {
    await t.step(`timeout ${String(timeout)}`, () => {
      assertEquals(bashTool.inputSchema.safeParse({ command: "true", timeout }).success, false);
    });
  }
  assertEquals(
    bashTool.inputSchema.safeParse({ command: "true", timeout: BASH_MAX_TIMEOUT_MS }).success,
    true,
  );
  assertEquals(bashTool.inputSchema.safeParse({ command: "true" }).success, true);
  assertEquals(bashTool.inputSchema.safeParse({ command: "true", cwd: "/" }).success, false);
  assertEquals(bashTool.inputSchema.safeParse({}).success, false);
  assertMatch(bashTool.validateInput({ command: "  " }, { root: "/" }) ?? "", /command is empty/);
});

Deno.test("Bash merges stdout and stderr in the order they were written", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const result = await bash(workspace.root, shell, {
    command: "echo one; echo two >&2; echo three; echo four >&2; ls /nonexistent-mewcode",
  });
  assertEquals(result.isError, false);
  assertMatch(outputOf(result), /^one\ntwo\nthree\nfour\nls: cannot access '\/nonexistent-mewcode'/);
});

Deno.test("Bash returns a non-zero exit code as a normal result in the output/exit_code format", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const result = await bash(workspace.root, shell, { command: "echo failing; exit 7" });
  assertEquals(result.isError, false);
  assertEquals(result.content, "<output>failing</output>\n<exit_code>7</exit_code>");
  assertEquals(result.metadata.exitCode, 7);
});

Deno.test("Bash starts every call in the workspace root with no state from earlier calls", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  await Deno.mkdir(`${workspace.root}/sub`);
  const first = await bash(workspace.root, shell, { command: "cd sub && export MEWCODE_X=1 && pwd" });
  assertEquals(outputOf(first), `${workspace.root}/sub`);
  const second = await bash(workspace.root, shell, { command: 'pwd; echo "x=[$MEWCODE_X]"' });
  assertEquals(outputOf(second), `${workspace.root}\nx=[]`);
});

Deno.test("Bash gives commands an empty stdin so reading input does not hang", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const result = await bash(workspace.root, shell, {
    command: 'cat; read -r line; echo "read=$?"',
    timeout: 20_000,
  });
  assertEquals(result.isError, false);
  assertEquals(outputOf(result), "read=1");
});

Deno.test("Bash keeps the first 2000 and last 8000 characters of long output with a marker", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const result = await bash(workspace.root, shell, {
    command: 'for i in $(seq 1 3000); do echo "line $i"; done',
  });
  const full = Array.from({ length: 3000 }, (_, index) => `line ${index + 1}\n`).join("");
  const cut = full.length - 10_000;
  const output = outputOf(result);
  assert(output.startsWith(full.slice(0, 2_000)), "head kept");
  assert(`${output}\n`.endsWith(full.slice(-8_000)), "tail kept");
  assertStringIncludes(output, `[${cut} characters cut from the middle of the output]`);
  assertEquals(result.metadata.charactersCut, cut);
});

Deno.test("Bash does not cut output of exactly 10000 characters and cuts one more", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const exact = await bash(workspace.root, shell, { command: "head -c 10000 /dev/zero | tr '\\0' a" });
  assertEquals(outputOf(exact), "a".repeat(10_000));
  const over = await bash(workspace.root, shell, { command: "head -c 10001 /dev/zero | tr '\\0' a" });
  assertStringIncludes(outputOf(over), "[1 characters cut from the middle of the output]");
  assertEquals(over.metadata.charactersCut, 1);
});

Deno.test("Bash never splits a surrogate pair where it cuts the output", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  // One ASCII character, then emoji: the 2000-character head boundary falls inside a pair.
  const result = await bash(workspace.root, shell, {
    command: "printf a; for i in $(seq 1 6001); do printf '\\360\\237\\230\\200'; done",
  });
  const output = outputOf(result);
  assert(output.isWellFormed(), "a lone surrogate remains");
  assert(output.startsWith(`a${"\u{1F600}".repeat(999)}\n...`), "head ends before the split pair");
  assert(output.endsWith("\u{1F600}".repeat(4_000)), "tail kept whole");
  assertEquals(result.metadata.charactersCut, 1 + 6001 * 2 - 1 - 999 * 2 - 8_000);
});

Deno.test("Bash strips ANSI escape sequences and control characters, even split across writes", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const result = await bash(workspace.root, shell, {
    command: String.raw`printf '\033[1;31mred\033[0m \033]0;title\007plain\033(B\n'; ` +
      String.raw`printf 'a\000b\007c\r\nd\rE\n'; ` +
      String.raw`printf '\033[3'; sleep 0.05; printf '2mgreen\033[0m\n'`,
  });
  assertEquals(outputOf(result), "red plain\nabc\nd\nE\ngreen");
});

Deno.test("Bash replaces invalid UTF-8 and survives binary output", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const invalid = await bash(workspace.root, shell, {
    command: String.raw`printf 'ok\377\376 caf\303'; sleep 0.05; printf '\251 \303(\n'`,
  });
  assertEquals(outputOf(invalid), "ok\uFFFD\uFFFD café \uFFFD(");
  const binary = await bash(workspace.root, shell, {
    command: "head -c 200000 /dev/urandom; echo; echo end",
  });
  assertEquals(binary.isError, false);
  const output = outputOf(binary);
  assert(output.endsWith("\nend"));
  const controls = [...output].filter((char) => /\p{Cc}/u.test(char) && char !== "\n" && char !== "\t");
  assertEquals(controls, [], "control characters remain");
});

Deno.test("Bash bounds its memory and output for a command printing 200 MB", async () => {
  await using workspace = await createTempWorkspace();
  // A 32 MB heap cannot hold the 200 MB of output: the call only succeeds if Bash streams it.
  const probe = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-check",
      "--v8-flags=--max-old-space-size=32",
      "-A",
      new URL("../_fakes/bash_memory_probe.ts", import.meta.url).pathname,
      workspace.root,
      "yes | head -c 200000000; echo; echo end",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(probe.code, 0, new TextDecoder().decode(probe.stderr));
  const result = JSON.parse(new TextDecoder().decode(probe.stdout)) as ToolResult;
  assertEquals(result.isError, false);
  assert(result.content.length < 10_200, `content is ${result.content.length} characters`);
  assertEquals(result.metadata.charactersCut, 200_000_005 - 10_000);
  assert(outputOf(result).endsWith("y\n\nend"));
});

Deno.test("Bash times out, kills the command and returns the output so far", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const marker = uniqueSleep();
  const result = await bash(workspace.root, shell, {
    command: `echo before; sleep ${marker}`,
    timeout: 1_000,
  });
  assertEquals(result.isError, true);
  assertStringIncludes(result.content, "timed out after 1000 ms");
  assertEquals(outputOf(result), "before");
  assertEquals([result.stop, result.metadata.process], ["timed-out", "timed-out"]);
  await assertNoSurvivors(marker);
});

for (const mode of ["workspace-write", "danger-full-access"] as const) {
  const cases = [
    ["background and foreground sleeps", (marker: string) => `sleep ${marker} & sleep ${marker}`],
    ["a nohup child", (marker: string) => `nohup sleep ${marker} >/dev/null 2>&1 & sleep ${marker}`],
    // A setsid child leaves the process group; only bubblewrap's PID namespace contains it.
    ...(mode === "danger-full-access"
      ? []
      : [["a setsid child", (marker: string) => `setsid sleep ${marker} & sleep ${marker}`] as const]),
  ] as const;
  for (const [name, command] of cases) {
    Deno.test(`Bash (${mode}) ends the call within 3 s of a 1 s timeout and kills ${name}`, async () => {
      await using workspace = await createTempWorkspace();
      await using sandbox = await sandboxFor(workspace.root, mode);
      const shell = await planOf(sandbox);
      const marker = uniqueSleep();
      const started = performance.now();
      const result = await bash(workspace.root, shell, { command: command(marker), timeout: 1_000 });
      const elapsed = performance.now() - started;
      assertEquals(result.isError, true);
      assertStringIncludes(result.content, "timed out after 1000 ms");
      assert(elapsed < 3_000, `the call took ${Math.round(elapsed)} ms`);
      await assertNoSurvivors(marker);
    });
  }

  Deno.test(`Bash (${mode}) does not wait for a background child that holds stdout open`, async () => {
    await using workspace = await createTempWorkspace();
    await using sandbox = await sandboxFor(workspace.root, mode);
    const shell = await planOf(sandbox);
    const marker = uniqueSleep();
    const started = performance.now();
    const result = await bash(workspace.root, shell, {
      command: `sleep ${marker} & echo done`,
      timeout: 20_000,
    });
    const elapsed = performance.now() - started;
    assertEquals(result.content, "<output>done</output>\n<exit_code>0</exit_code>");
    assert(elapsed < 3_000, `the call took ${Math.round(elapsed)} ms`);
    await assertNoSurvivors(marker);
  });
}

Deno.test("Bash stops the command when the call is aborted and returns the output so far", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const marker = uniqueSleep();
  const controller = new AbortController();
  const running = bash(
    workspace.root,
    shell,
    { command: `echo started; touch started; sleep ${marker}`, timeout: 20_000 },
    controller.signal,
  );
  // Abort once the command is surely running, whatever the machine's load.
  while (!await exists(`${workspace.root}/started`)) await new Promise((resolve) => setTimeout(resolve, 10));
  controller.abort();
  const result = await running;
  assertEquals(result.isError, true);
  assertEquals([result.stop, result.metadata.process], ["cancelled", "cancelled"]);
  assertStringIncludes(result.content, "cancelled");
  assertEquals(outputOf(result), "started");
  await assertNoSurvivors(marker);
});

Deno.test("Bash runs nothing when the call is already aborted", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const result = await bash(workspace.root, shell, { command: "touch ran" }, AbortSignal.abort());
  assertEquals(result.isError, true);
  assertEquals(result.stop, "cancelled");
  assertEquals(await exists(`${workspace.root}/ran`), false);
});

Deno.test("Bash returns an error result when the shell cannot be started", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root, "danger-full-access");
  const shell = { ...await planOf(sandbox), wrapper: [], shell: "/nonexistent/mewcode-bash" };
  const result = await bash(workspace.root, shell, { command: "true" });
  assertEquals(result.isError, true);
  assertMatch(result.content, /^Cannot run Bash command: \/nonexistent\/mewcode-bash: NotFound/);
});

/** Runs Bash in a worker with exactly the permissions the worker pool gives it. */
async function bashInWorker(run: string[], request: BashWorkerRequest): Promise<BashWorkerResponse> {
  const worker = new Worker(new URL("../_fakes/bash_worker.ts", import.meta.url), {
    type: "module",
    deno: {
      permissions: {
        run,
        read: false,
        write: false,
        env: false,
        net: false,
        sys: false,
        ffi: false,
        import: false,
      },
    },
  });
  try {
    return await new Promise<BashWorkerResponse>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<BashWorkerResponse>) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message));
      };
      worker.postMessage(request);
    });
  } finally {
    worker.terminate();
  }
}

function workerContext(root: string, shell: ShellPlan): BashWorkerRequest["context"] {
  const { signal: _signal, ...context } = toolContext(root, { shell });
  return context;
}

Deno.test("Bash runs, times out and kills its processes in a worker allowed only to run bwrap", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  const shell = await planOf(sandbox);
  const context = workerContext(workspace.root, shell);
  const ran = await bashInWorker(["bwrap"], {
    context,
    input: { command: "echo hi >&2; touch made; exit 3" },
  });
  assert(ran.ok, ran.ok ? "" : ran.error);
  assertEquals(ran.result.content, "<output>hi</output>\n<exit_code>3</exit_code>");
  assertEquals(await exists(`${workspace.root}/made`), true);

  const marker = uniqueSleep();
  const timedOut = await bashInWorker(["bwrap"], {
    context,
    input: { command: `setsid sleep ${marker} & nohup sleep ${marker} & sleep ${marker}`, timeout: 1_000 },
  });
  assert(timedOut.ok, timedOut.ok ? "" : timedOut.error);
  assertStringIncludes(timedOut.result.content, "timed out after 1000 ms");
  await assertNoSurvivors(marker);

  const abortMarker = uniqueSleep();
  const aborted = await bashInWorker(["bwrap"], {
    context,
    input: { command: `sleep ${abortMarker}`, timeout: 20_000 },
    abortAfterMs: 200,
  });
  assert(aborted.ok, aborted.ok ? "" : aborted.error);
  assertEquals(aborted.result.stop, "cancelled");
  await assertNoSurvivors(abortMarker);
});

Deno.test("Bash without a sandbox kills its process group in a worker allowed only to run the shell", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root, "danger-full-access");
  // The shell run directly, as danger-full-access does where bubblewrap is missing.
  const shell = { ...await planOf(sandbox), wrapper: [] };
  const context = workerContext(workspace.root, shell);
  const marker = uniqueSleep();
  const timedOut = await bashInWorker([shell.shell], {
    context,
    input: { command: `echo started; sleep ${marker} & sleep ${marker}`, timeout: 1_000 },
  });
  assert(timedOut.ok, timedOut.ok ? "" : timedOut.error);
  assertStringIncludes(timedOut.result.content, "timed out after 1000 ms");
  assertEquals(outputOf(timedOut.result), "started");
  await assertNoSurvivors(marker);

  const backgroundMarker = uniqueSleep();
  const background = await bashInWorker([shell.shell], {
    context,
    input: { command: `sleep ${backgroundMarker} >/dev/null & echo done` },
  });
  assert(background.ok, background.ok ? "" : background.error);
  assertEquals(background.result.content, "<output>done</output>\n<exit_code>0</exit_code>");
  await assertNoSurvivors(backgroundMarker);
});

Deno.test("Bash stopped while bubblewrap still builds the sandbox leaves no process behind", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await sandboxFor(workspace.root);
  // Abort at once and after a few milliseconds: bubblewrap is then still setting up the sandbox, whose
  // first process arms its parent-death signal only at the end.
  for (const delayMs of [0, 1, 2, 5, 10, 20, 40]) {
    const marker = uniqueSleep();
    const controller = new AbortController();
    const running = bash(
      workspace.root,
      await planOf(sandbox),
      { command: `sleep ${marker}` },
      controller.signal,
    );
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    controller.abort();
    const result = await running;
    assertEquals(result.stop, "cancelled", `after ${delayMs} ms`);
    // The tree may need a moment to be reaped once bubblewrap is gone; the orphans of a sandbox killed
    // too early would stay for good.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await assertNoSurvivors(marker);
  }
});

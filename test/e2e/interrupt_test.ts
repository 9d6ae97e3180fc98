/**
 * End to end: SIGINT (Ctrl-C), SIGTERM or SIGHUP (the terminal closed) during `mewcode -p` ends the run
 * promptly with exit 130, 143 or 129, prints the partial result in the chosen format, kills the running
 * command with everything it started, removes the sandbox's temporary folder, and leaves a transcript that
 * says what happened.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { readTranscript, type TranscriptRecord } from "../../src/session/transcript.ts";
import { workspaceSlug } from "../../src/config/home.ts";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { processesWith } from "../_fakes/processes.ts";

async function transcriptRecords(home: string, root: string): Promise<TranscriptRecord[]> {
  const dir = join(home, "projects", await workspaceSlug(root));
  try {
    const files = (await Array.fromAsync(Deno.readDir(dir))).filter((entry) => entry.name.endsWith(".jsonl"));
    if (files.length !== 1) return [];
    return (await readTranscript(join(dir, files[0]!.name))).records;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
  Deno.test(`e2e: ${signal} during a Bash call exits ${status} within 2 s, prints the JSON result, kills the command's processes, leaves no temporary files and records the end`, async () => {
    await using workspace = await createTempWorkspace("mewcode-e2e-int-");
    await using home = await createTempWorkspace("mewcode-e2e-int-home-");
    // The run's own temporary folder, to see what it leaves there (the kept sandbox's files).
    await using temporary = await createTempWorkspace("mewcode-e2e-int-tmp-");
    const marker = `300.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    await using server = await startFakeAnthropic([
      turn().text("Waiting.").toolUse("Bash", { command: `sleep ${marker} & sleep ${marker}` }, {
        id: "toolu_sleep",
      }).stop("tool_use"),
    ]);
    const child = new Deno.Command(LAUNCHER, {
      args: ["-p", "wait", "--permission-mode", "bypassPermissions", "--output-format", "json"],
      cwd: workspace.root,
      env: { ...server.env(), MEWCODE_HOME: home.root, TMPDIR: temporary.root },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output();
    const deadline = Date.now() + 60_000;
    while (
      !(await transcriptRecords(home.root, workspace.root)).some((record) =>
        record.type === "tool-call-start"
      )
    ) {
      ok(Date.now() < deadline, "the Bash call never started");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    while ((await processesWith(marker)) === 0) {
      ok(Date.now() < deadline, "the sleeps never started");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const interruptedAt = Date.now();
    // To the process id only, as `kill PID` does: not to the process group.
    Deno.kill(child.pid, signal);
    const result = await output;
    const elapsed = Date.now() - interruptedAt;
    const stderr = new TextDecoder().decode(result.stderr);
    equal(result.code, status, stderr);
    ok(elapsed < 2_000, `the run ended ${elapsed} ms after ${signal}`);
    match(stderr, new RegExp(`Interrupted by ${signal}`));
    equal(await processesWith(marker), 0, "no process of the command survives");
    deepStrictEqual(
      (await Array.fromAsync(Deno.readDir(temporary.root))).map((entry) => entry.name),
      [],
      "the temporary folder is left as it was",
    );
    equal(server.requests.length, 1, "no further request after the interrupt");
    const json = JSON.parse(new TextDecoder().decode(result.stdout));
    equal(json.type, "result");
    equal(json.subtype, "interrupted");
    equal(json.is_error, true);
    equal(json.result, "Waiting.");
    const records = await transcriptRecords(home.root, workspace.root);
    const end = records.find((record) => record.type === "tool-call-end");
    ok(
      end !== undefined && end.type === "tool-call-end",
      JSON.stringify(records.map((record) => record.type)),
    );
    equal(end.isError, true);
    equal(end.outcome.status, "aborted");
    const last = records.at(-1);
    ok(last?.type === "turn-end" && last.reason === "aborted", JSON.stringify(last));
  });
}

Deno.test("e2e: SIGINT during `mewcode doctor`, which takes no signal, exits 130 at once rather than run on", async () => {
  await using workspace = await createTempWorkspace("mewcode-e2e-int-doctor-");
  await using home = await createTempWorkspace("mewcode-e2e-int-doctor-home-");
  // An API that takes the connection and never answers: doctor waits for it (3 s) unless stopped.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const connection of listener) held.push(connection);
  })();
  try {
    const child = new Deno.Command(LAUNCHER, {
      args: ["doctor"],
      cwd: workspace.root,
      env: {
        ANTHROPIC_API_KEY: "sk-test",
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${listener.addr.port}`,
        MEWCODE_HOME: home.root,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output();
    const deadline = Date.now() + 30_000;
    while (held.length === 0) {
      ok(Date.now() < deadline, "doctor never asked the API");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const sentAt = Date.now();
    child.kill("SIGINT");
    const { code } = await output;
    equal(code, 130);
    ok(Date.now() - sentAt < 1_500, `exited ${Date.now() - sentAt} ms after the signal, not at once`);
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const connection of held) connection.close();
  }
});

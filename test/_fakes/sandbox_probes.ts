/**
 * Test-only tools that run inside real tool workers (through sandbox_probe_worker.ts), to observe what the
 * sandbox allows and how the executor handles tools that hang, crash, throw or misbehave.
 *
 * Each probe reports the worker it ran in (`metadata.worker`, one id per module instance, so per worker).
 *
 * @module
 */
import { z } from "zod";
import { type AnyTool, defineTool, errorResult, textResult, type ToolResult } from "../../src/tools/tool.ts";

/** The entry point that serves SANDBOX_PROBE_TOOLS, for `new WorkerExecutor({ workerUrl })`. */
export const SANDBOX_PROBE_WORKER_URL: URL = new URL("./sandbox_probe_worker.ts", import.meta.url);

/** Identifies this module instance: each worker loads its own copy, so each worker has its own id. */
export const WORKER_INSTANCE: string = crypto.randomUUID();

/** What an attempt probe can try. */
export const ATTEMPTS = [
  "read-inside",
  "read-outside",
  "write-inside",
  "write-outside",
  "spawn-bash",
  "spawn-bwrap",
  "connect",
  "listen",
  "env",
  "sys",
  "ffi",
] as const;

/** One of ATTEMPTS. */
export type Attempt = typeof ATTEMPTS[number];

const AttemptInput = z.object({
  attempt: z.enum(ATTEMPTS).describe("What to try"),
  path: z.string().optional().describe("The file for read-outside/write-outside; default /etc/hostname"),
  port: z.number().int().optional().describe("The 127.0.0.1 port for connect"),
}).strict();

/**
 * Tries one operation with the raw Deno API (no checks of ours) and reports how it went:
 * `metadata.outcome` is "ok" or the name of the error Deno threw (e.g. "NotCapable").
 */
async function attempt(root: string, input: z.infer<typeof AttemptInput>): Promise<ToolResult> {
  try {
    switch (input.attempt) {
      case "read-inside":
        await Deno.readTextFile(`${root}/inside.txt`);
        break;
      case "read-outside":
        await Deno.readTextFile(input.path ?? "/etc/hostname");
        break;
      case "write-inside":
        await Deno.writeTextFile(`${root}/written-by-probe.txt`, "probe");
        break;
      case "write-outside":
        await Deno.writeTextFile(input.path ?? "/tmp/mewcode-probe-outside.txt", "probe");
        break;
      case "spawn-bash":
        await new Deno.Command("bash", { args: ["-c", "true"], stdout: "null", stderr: "null" }).output();
        break;
      case "spawn-bwrap":
        await new Deno.Command("bwrap", {
          args: ["--ro-bind", "/", "/", "--dev", "/dev", "true"],
          clearEnv: true,
          stdout: "null",
          stderr: "null",
        }).output();
        break;
      case "connect": {
        const connection = await Deno.connect({ hostname: "127.0.0.1", port: input.port ?? 9 });
        connection.close();
        break;
      }
      case "listen":
        Deno.listen({ hostname: "127.0.0.1", port: 0 }).close();
        break;
      case "env":
        Deno.env.get("HOME");
        break;
      case "sys":
        Deno.hostname();
        break;
      case "ffi":
        Deno.dlopen("libc.so.6", {}).close();
        break;
    }
  } catch (error) {
    const name = error instanceof Error ? error.name : "unknown";
    const message = error instanceof Error ? error.message : String(error);
    return textResult(`${input.attempt}: ${name}: ${message}`, { outcome: name, worker: WORKER_INSTANCE });
  }
  return textResult(`${input.attempt}: ok`, { outcome: "ok", worker: WORKER_INSTANCE });
}

function attemptTool(name: string, access: { isReadOnly: boolean; isDestructive: boolean }): AnyTool {
  return defineTool({
    name,
    description: `${name}: tries an operation its sandbox may forbid (tests only)`,
    category: "other",
    inputSchema: AttemptInput,
    ...access,
    execute: (context, input) => attempt(context.root, input),
  });
}

/** A read-only tool that tries things: its worker may only read the root. */
export const probeReadOnlyTool: AnyTool = attemptTool("ProbeReadOnly", {
  isReadOnly: true,
  isDestructive: false,
});
/** A non-destructive writer that tries things: its worker may read and write the root. */
export const probeWriterTool: AnyTool = attemptTool("ProbeWriter", {
  isReadOnly: false,
  isDestructive: false,
});
/** A destructive tool that tries things: its worker may only spawn the shell's sandbox program. */
export const probeShellTool: AnyTool = attemptTool("ProbeShell", { isReadOnly: false, isDestructive: true });

const BehaveInput = z.object({
  behavior: z.enum([
    "echo",
    "wait",
    "hang-busy",
    "hang-forever",
    "throw",
    "crash",
    "crash-later",
    "not-a-result",
    "uncloneable",
    "progress",
  ])
    .describe("How the call behaves"),
  text: z.string().optional().describe("What echo returns"),
  ms: z.number().int().nonnegative().optional().describe("How long wait waits (ends early on abort)"),
}).strict();

/** A read-only tool whose behaviour the test chooses: answer, wait, hang, throw, crash its worker, misbehave. */
export const probeBehaveTool: AnyTool = defineTool({
  name: "ProbeBehave",
  description: "ProbeBehave: behaves as told (tests only)",
  category: "other",
  inputSchema: BehaveInput,
  isReadOnly: true,
  async execute(context, input): Promise<ToolResult> {
    const metadata = { worker: WORKER_INSTANCE };
    switch (input.behavior) {
      case "echo":
        return textResult(input.text ?? "", metadata);
      case "wait":
        await abortableDelay(input.ms ?? 0, context.signal);
        return textResult(context.signal.aborted ? "aborted" : "waited", metadata);
      case "hang-busy":
        return spinForever();
      case "hang-forever":
        return await new Promise<ToolResult>(() => {});
      case "throw":
        throw new RangeError("probe failure");
      case "crash":
        // Thrown outside execute: nothing in the worker catches it, so the worker dies.
        setTimeout(() => {
          throw new Error("probe crash");
        }, 0);
        return await new Promise<ToolResult>(() => {});
      case "crash-later":
        // Returns normally, then a timer it left behind throws while the worker is idle.
        setTimeout(() => {
          throw new Error("probe crash after the call");
        }, 20);
        return textResult("returned", metadata);
      case "not-a-result":
        return JSON.parse('{"content": 42}');
      case "progress":
        // Says its news, then waits `ms` (or until aborted) before its result.
        context.progress?.("budget-spent");
        await abortableDelay(input.ms ?? 0, context.signal);
        return textResult(context.progress === undefined ? "nobody listens" : "told", metadata);
      case "uncloneable":
        return textResult("uncloneable", { ...metadata, callback: () => "functions cannot be cloned" });
    }
  },
});

const CancelInput = z.object({ label: z.string().describe("Names the marker file") }).strict();

/**
 * A writer that writes `<root>/started-<label>`, waits until its call is cancelled, then writes
 * `<root>/cancelled-<label>` (the abort reason) before returning: the second marker proves the worker
 * received the cancel request and the tool saw its signal abort.
 */
export const probeCancelTool: AnyTool = defineTool({
  name: "ProbeCancel",
  description: "ProbeCancel: waits for cancellation, then leaves a marker (tests only)",
  category: "other",
  inputSchema: CancelInput,
  isReadOnly: false,
  isDestructive: false,
  async execute(context, input): Promise<ToolResult> {
    const aborted = new Promise<void>((resolve) =>
      context.signal.addEventListener("abort", () => resolve(), { once: true })
    );
    await Deno.writeTextFile(`${context.root}/started-${input.label}`, "");
    await aborted;
    await Deno.writeTextFile(`${context.root}/cancelled-${input.label}`, String(context.signal.reason));
    return errorResult("cancelled", { worker: WORKER_INSTANCE });
  },
});

/** Every sandbox probe, as served by sandbox_probe_worker.ts. */
export const SANDBOX_PROBE_TOOLS: readonly AnyTool[] = [
  probeReadOnlyTool,
  probeWriterTool,
  probeShellTool,
  probeBehaveTool,
  probeCancelTool,
];

/**
 * A synchronous loop: no signal or message can interrupt it, and in Deno 2.9 not even `terminate()`
 * (denoland/deno#35657); only the end of the process stops it.
 */
function spinForever(): never {
  while (true) Math.random();
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

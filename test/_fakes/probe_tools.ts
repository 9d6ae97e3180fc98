/**
 * Tools that report when they start and end and can be held until the test releases them, to observe
 * the scheduler's ordering without timing assumptions. They run in-process (DirectExecutor).
 *
 * @module
 */
import { z } from "zod";
import { DirectExecutor } from "../../src/execution/executor.ts";
import { FileRecordStore } from "../../src/execution/file_records.ts";
import { ToolPipeline } from "../../src/execution/pipeline.ts";
import type { PermissionPolicy } from "../../src/permissions/decision.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { type AnyTool, defineTool, textResult } from "../../src/tools/tool.ts";
import { ALLOW_ALL, fixedShell, NO_SHELL } from "./pipeline.ts";

/** Input of the probe tools: a label and, optionally, a gate to wait for before finishing. */
const ProbeInput = z.object({
  label: z.string().describe("Names the call in the log"),
  hold: z.string().optional().describe("Wait for the gate of this name before finishing"),
  output: z.string().optional().describe("The result text; default `done <label>`"),
}).strict();

/** A set of probe tools sharing one log and one set of gates. */
export class Probes {
  /** `start <label>` and `end <label>` in the order they happened. */
  readonly log: string[] = [];
  /** How many probe calls are running right now, and the most at once. */
  running = 0;
  maxRunning = 0;
  #gates = new Map<string, PromiseWithResolvers<void>>();
  #startWaiters: { label: string; resolve: () => void }[] = [];

  /** Read-only, concurrency-safe. */
  readonly read: AnyTool = this.#define("ProbeRead", { isReadOnly: true, isConcurrencySafe: () => true });
  /** A non-destructive writer: not concurrency-safe. */
  readonly write: AnyTool = this.#define("ProbeWrite", { isReadOnly: false, isDestructive: false });

  /** Every probe tool. */
  get tools(): AnyTool[] {
    return [this.read, this.write];
  }

  /** Lets every call holding on `name` finish (now or when it arrives). */
  release(name: string): void {
    this.#gate(name).resolve();
  }

  /** Resolves once a call with this label has started. */
  started(label: string): Promise<void> {
    if (this.log.includes(`start ${label}`)) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#startWaiters.push({ label, resolve });
    return promise;
  }

  #gate(name: string): PromiseWithResolvers<void> {
    let gate = this.#gates.get(name);
    if (!gate) {
      gate = Promise.withResolvers<void>();
      this.#gates.set(name, gate);
    }
    return gate;
  }

  #define(
    name: string,
    metadata: { isReadOnly: boolean; isDestructive?: boolean; isConcurrencySafe?: () => boolean },
  ): AnyTool {
    return defineTool({
      name,
      description: `${name}: a probe for scheduler tests`,
      category: "other",
      inputSchema: ProbeInput,
      ...metadata,
      timeoutMs: () => 10_000,
      execute: async (context, input) => {
        this.log.push(`start ${input.label}`);
        this.running += 1;
        this.maxRunning = Math.max(this.maxRunning, this.running);
        for (const waiter of this.#startWaiters.filter((waiter) => waiter.label === input.label)) {
          waiter.resolve();
        }
        try {
          if (input.hold !== undefined) {
            const aborted = new Promise<void>((resolve) =>
              context.signal.addEventListener("abort", () => resolve(), { once: true })
            );
            await Promise.race([this.#gate(input.hold).promise, aborted]);
          }
          return textResult(input.output ?? `done ${input.label}`);
        } finally {
          this.running -= 1;
          this.log.push(`end ${input.label}`);
        }
      },
    });
  }
}

/** A pipeline over the given tools, executing in-process, with a policy (default: allow all). */
export function probePipeline(tools: AnyTool[], policy: PermissionPolicy = ALLOW_ALL): ToolPipeline {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return new ToolPipeline({
    registry,
    executor: new DirectExecutor(),
    policy,
    files: new FileRecordStore(),
    root: "/ws",
    strictLinks: false,
    shell: fixedShell(NO_SHELL),
  });
}

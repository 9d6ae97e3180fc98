/**
 * A session's tool runtime (src/execution/runtime.ts), built on demand: what the first request needs (the
 * catalog of the tools offered, the checked folders) is known at once, the modules behind the tools load
 * with `load()`. A one-shot session builds it once the model answers; every other session at once.
 *
 * @module
 */
import { lazyImport } from "../common/lazy_import.ts";
import type { RuntimeOptions, ToolRuntime } from "../execution/runtime.ts";
import type { ShellSandbox } from "../sandbox/shell_sandbox.ts";
import { BUILTIN_TOOL_INFO } from "../tools/catalog.ts";
import { createRegistry, type ToolRegistry } from "../tools/registry.ts";
import type { ProtectedPath, ToolInfo } from "../tools/tool.ts";
import { loadShellParser } from "../permissions/shell_parser.ts";

/** A session's tool runtime, built once with `load()`. */
export class LazyRuntime {
  readonly catalog: ToolRegistry<ToolInfo>;
  readonly additionalRoots: readonly string[];
  #options: RuntimeOptions;
  #loading: Promise<ToolRuntime> | null = null;
  #loaded: ToolRuntime | null = null;

  #onLoad: ((runtime: ToolRuntime) => void) | undefined;
  #protections: (() => Promise<readonly ProtectedPath[]>) | undefined;

  /**
   * `onLoad` sees the runtime once built, before anyone can call a tool through it. `protections`, when
   * given, gathers the protected paths as the runtime is built (in place of `protectedPaths`).
   */
  constructor(
    options: RuntimeOptions & {
      additionalRoots: readonly string[];
      onLoad?: (runtime: ToolRuntime) => void;
      protections?: () => Promise<readonly ProtectedPath[]>;
    },
  ) {
    const { onLoad, protections, ...runtimeOptions } = options;
    this.#options = runtimeOptions;
    this.#onLoad = onLoad;
    this.#protections = protections;
    this.additionalRoots = options.additionalRoots;
    this.catalog = createRegistry(BUILTIN_TOOL_INFO, {
      allowWrite: !options.readOnly,
      allowBash: !options.readOnly,
    });
  }

  /** The runtime if it has been built. */
  get loaded(): ToolRuntime | null {
    return this.#loaded;
  }

  /** Whether it has been asked for (it may still be loading, or have failed). */
  get started(): boolean {
    return this.#loading !== null;
  }

  /** Builds the runtime once; every caller gets the same one (or the same error). */
  load(): Promise<ToolRuntime> {
    // With the tools, the parser the policy reads Bash calls with (loaded on demand otherwise: 14 ms).
    if (this.#loading === null && !this.#options.readOnly) void loadShellParser().catch(() => {});
    this.#loading ??= (async () => {
      const { createToolRuntime } = await lazyImport<typeof import("../execution/runtime.ts")>(
        new URL("../execution/runtime.ts", import.meta.url),
      );
      const options = this.#protections === undefined
        ? this.#options
        : { ...this.#options, protectedPaths: await this.#protections() };
      const runtime = await createToolRuntime(options);
      this.#onLoad?.(runtime);
      this.#loaded = runtime;
      return runtime;
    })();
    return this.#loading;
  }

  /** The shell sandbox, building the runtime for it if need be (a hook that runs in the sandbox). */
  sandbox(): ShellSandbox | Promise<ShellSandbox> {
    return this.#loaded?.sandbox ?? this.load().then((runtime) => runtime.sandbox);
  }

  async close(): Promise<void> {
    if (this.#loading === null) return;
    let runtime: ToolRuntime;
    try {
      runtime = await this.#loading;
    } catch {
      return; // It never started: nothing to stop.
    }
    await runtime.close();
  }
}

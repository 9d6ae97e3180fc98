/**
 * Shared helpers for tool tests: a real temporary workspace and a ToolContext for calling `execute` directly.
 *
 * @module
 */
import type { ShellPlan, ToolCallContext, ToolContext, ToolResult } from "../../src/tools/tool.ts";

/** A temporary directory that acts as the workspace root; removed by `cleanup` or `await using`. */
export interface TempWorkspace extends AsyncDisposable {
  /** Real path of the directory (symlinks in the temp dir's own path resolved). */
  root: string;
  /** Removes the directory and everything in it. */
  cleanup(): Promise<void>;
}

/** Creates a temporary workspace directory; use with `await using workspace = await createTempWorkspace()`. */
export async function createTempWorkspace(prefix = "mewcode-test-"): Promise<TempWorkspace> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  let removed = false;
  const cleanup = async (): Promise<void> => {
    if (removed) return;
    removed = true;
    await Deno.remove(root, { recursive: true }).catch(() => undefined);
  };
  return { root, cleanup, [Symbol.asyncDispose]: cleanup };
}

/** A shell plan that runs bash directly with a minimal environment; for tests that need any ShellPlan. */
export const TEST_SHELL_PLAN: ShellPlan = {
  mode: "danger-full-access",
  network: false,
  wrapper: [],
  shell: "/bin/bash",
  env: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8", TERM: "dumb" },
  prologue: [],
  seccomp: null,
  unavailable: null,
};

/** Builds the context a tool's `execute` receives, for a workspace root; `overrides` replace any field. */
export function toolContext(root: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    root,
    timeoutMs: 30_000,
    fileRecords: {},
    strictLinks: false,
    shell: TEST_SHELL_PLAN,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Deno permissions of a tool worker: what the executor grants a tool class (everything else denied). */
export function workerPermissions(root: string, access: "read" | "read-write"): Deno.PermissionOptionsObject {
  return {
    read: [root],
    write: access === "read-write" ? [root] : false,
    net: false,
    env: false,
    run: false,
    ffi: false,
    import: false,
    sys: false,
  };
}

/**
 * A worker restricted to `permissions` that runs exported tools of some modules: the way the executor runs
 * tools, without depending on it. Dispose it (or call `close`) to terminate the worker.
 */
export interface ToolWorker extends Disposable {
  /** Runs the tool exported as `exportName` (for example "readFileTool"). */
  execute(exportName: string, context: ToolCallContext, input: unknown): Promise<ToolResult>;
  close(): void;
}

/** The file tools by export name, for `startToolWorker`. */
export const FILE_TOOL_MODULES: Readonly<Record<string, URL>> = {
  readFileTool: new URL("../../src/tools/read_file.ts", import.meta.url),
  writeFileTool: new URL("../../src/tools/write_file.ts", import.meta.url),
  editFileTool: new URL("../../src/tools/edit_file.ts", import.meta.url),
};

/** Every built-in tool's runner module, as the worker entries import them (workers/*_worker.ts). */
const RUNNERS = ["_read_file_run", "_glob_run", "_grep_run", "_write_file_run", "_edit_file_run", "_bash_run"]
  .map((name) => new URL(`../../src/tools/${name}.ts`, import.meta.url));

/**
 * Starts a restricted worker serving the tools of `modules` (export name → module URL). Workers started with
 * the same `modules` share one module source, so the runtime type-checks it once.
 */
export function startToolWorker(
  modules: Readonly<Record<string, URL>>,
  permissions: Deno.PermissionOptionsObject,
): ToolWorker {
  const names = Object.keys(modules).sort();
  const imports = names.map((name, index) =>
    `import { ${name} as tool${index} } from ${JSON.stringify(modules[name]!.href)};`
  );
  // The runners, as the worker entries load them (workers/*_worker.ts): a definition's \`execute\` imports
  // its runner when first called, which a worker may not read from disk but finds loaded.
  const source = `${imports.join("\n")}
${RUNNERS.map((runner) => `import ${JSON.stringify(runner.href)};`).join("\n")}
const tools = { ${names.map((name, index) => `${JSON.stringify(name)}: tool${index}`).join(", ")} };
self.onmessage = async (event) => {
  try {
    const tool = tools[event.data.exportName];
    const result = await tool.execute({ ...event.data.context, signal: new AbortController().signal }, event.data.input);
    self.postMessage({ ok: true, result });
  } catch (error) {
    self.postMessage({ ok: false, error: String(error?.stack ?? error) });
  }
};`;
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const worker = new Worker(url, { type: "module", deno: { permissions } });
  let queue: Promise<unknown> = Promise.resolve();
  const close = (): void => {
    worker.terminate();
    URL.revokeObjectURL(url);
  };
  const call = (exportName: string, context: ToolCallContext, input: unknown): Promise<ToolResult> =>
    new Promise((resolve, reject) => {
      worker.onmessage = (
        event: MessageEvent<{ ok: true; result: ToolResult } | { ok: false; error: string }>,
      ) => {
        if (event.data.ok) resolve(event.data.result);
        else reject(new Error(`The tool threw in the worker: ${event.data.error}`));
      };
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(`The tool worker failed: ${event.message}`));
      };
      worker.postMessage({ exportName, context, input });
    });
  return {
    execute(exportName, context, input) {
      const result = queue.then(() => call(exportName, context, input));
      queue = result.catch(() => undefined);
      return result;
    },
    close,
    [Symbol.dispose]: close,
  };
}

/** The context of `toolContext` without its signal: what crosses into a worker or a subprocess. */
export function callContext(root: string, overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  const { signal: _signal, ...context } = toolContext(root, overrides);
  return context;
}

const DENO_CONFIG = new URL("../../deno.json", import.meta.url);

/**
 * Runs one tool call in a separate `deno` process that file permission bits apply to and that may not give
 * a file away, even when the tests run as root (the DAC-override and chown capabilities are dropped with
 * `setpriv`): for permission-denied tests.
 */
export async function executeUnprivileged(
  toolModule: URL,
  exportName: string,
  context: ToolCallContext,
  input: unknown,
): Promise<ToolResult> {
  const script = `import { ${exportName} as tool } from ${JSON.stringify(toolModule.href)};
const { context, input } = JSON.parse(Deno.args[0]);
const result = await tool.execute({ ...context, signal: new AbortController().signal }, input);
console.log(JSON.stringify(result));`;
  const denoArgs = [
    "run",
    "--quiet",
    "--no-lock",
    "--no-prompt",
    `--config=${DENO_CONFIG.pathname}`,
    "--allow-read",
    "--allow-write",
    `data:text/javascript;base64,${btoa(script)}`,
    JSON.stringify({ context, input }),
  ];
  const privileged = Deno.uid() === 0;
  const command = privileged
    ? new Deno.Command("setpriv", {
      args: ["--bounding-set=-dac_override,-dac_read_search,-chown", Deno.execPath(), ...denoArgs],
      stdout: "piped",
      stderr: "piped",
    })
    : new Deno.Command(Deno.execPath(), { args: denoArgs, stdout: "piped", stderr: "piped" });
  const output = await command.output();
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`The unprivileged tool call failed: ${new TextDecoder().decode(output.stderr)}${stdout}`);
  }
  return JSON.parse(stdout) as ToolResult;
}

/** Fails unless `actual` contains `expected`, showing both. */
export function assertIncludes(actual: string, expected: string): void {
  if (!actual.includes(expected)) {
    throw new Error(`Expected the text to include ${JSON.stringify(expected)}, got:\n${actual}`);
  }
}

/** Fails if `actual` contains `unexpected`, showing both. */
export function assertExcludes(actual: string, unexpected: string): void {
  if (actual.includes(unexpected)) {
    throw new Error(`Expected the text not to include ${JSON.stringify(unexpected)}, got:\n${actual}`);
  }
}

/**
 * Sets the modification times of everything under `root` an hour back, as in a tree nobody touched lately:
 * a change made afterwards then shows in a walk's stamps (`stampsUsable` in src/tools/_walk.ts).
 */
export async function settleTree(root: string): Promise<void> {
  const hourAgo = new Date(Date.now() - 3_600_000);
  const visit = async (path: string): Promise<void> => {
    const info = await Deno.lstat(path);
    if (info.isDirectory) {
      for await (const entry of Deno.readDir(path)) await visit(`${path}/${entry.name}`);
    }
    if (!info.isSymlink) await Deno.utime(path, hourAgo, hourAgo);
  };
  await visit(root);
}

/**
 * Runs the shipped launcher, scripts/mewcode, as a real process: what is tested is what ships.
 *
 * @module
 */

/** Absolute path of scripts/mewcode. */
export const LAUNCHER = new URL("../../scripts/mewcode", import.meta.url).pathname;

/** What a finished mewcode process left behind. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for one run. */
export interface CliRunOptions {
  cwd?: string;
  /** Added to (and overriding) the test process's environment. */
  env?: Record<string, string>;
  stdin?: string;
  signal?: AbortSignal;
}

/** No run of the CLI in a test may take longer: a hang fails the test instead of stalling the suite. */
export const CLI_RUN_LIMIT_MS = 120_000;

/** Runs `scripts/mewcode ...args` to completion; kills it after CLI_RUN_LIMIT_MS or on `options.signal`. */
export function runMewcode(args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return runProgram(LAUNCHER, args, options);
}

/** Runs `command ...args` to completion; kills it after CLI_RUN_LIMIT_MS or on `options.signal`. */
export async function runProgram(
  command: string,
  args: string[],
  options: CliRunOptions = {},
): Promise<CliRun> {
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(), CLI_RUN_LIMIT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, limit.signal]) : limit.signal;
  try {
    const child = new Deno.Command(command, {
      args,
      cwd: options.cwd ?? Deno.cwd(),
      env: options.env ?? {},
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      signal,
    }).spawn();
    if (options.stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
    }
    const output = await child.output();
    const decoder = new TextDecoder();
    const stderr = decoder.decode(output.stderr);
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: limit.signal.aborted ? `${stderr}\n[killed after ${CLI_RUN_LIMIT_MS} ms]` : stderr,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A finished run as an assertion's message: its exit code and both outputs. */
export function explainRun(run: CliRun): string {
  return `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
}

/** Parses the JSON that `mewcode tool` prints. */
export function parseToolOutput(
  run: CliRun,
): { content: string; is_error: boolean; metadata: Record<string, unknown> } {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`mewcode tool printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

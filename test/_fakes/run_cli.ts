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

/** Runs `scripts/mewcode ...args` to completion. */
export async function runMewcode(args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  const child = new Deno.Command(LAUNCHER, {
    args,
    cwd: options.cwd ?? Deno.cwd(),
    env: options.env ?? {},
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    ...(options.signal ? { signal: options.signal } : {}),
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
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

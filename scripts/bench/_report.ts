/**
 * What each benchmark returns to `scripts/bench.ts`: its Markdown section, and the goals it measured, which
 * the report gathers into one table at the top of BENCHMARKS.md (met or not, with the numbers); and the
 * measuring helpers they share (medians, the load, a process tree's memory from /proc).
 *
 * @module
 */

/** One goal of a benchmark, measured in this run. */
export interface Goal {
  /** What is measured, e.g. "first model request after spawn". */
  name: string;
  /** The goal as written in the issue, e.g. "≤ 95 ms" or "≤ 1.5× rg". */
  target: string;
  /** The measurement with its baseline, e.g. "84 ms (hello world 41 ms)". */
  measured: string;
  met: boolean;
}

/** A benchmark's part of the report. */
export interface BenchSection {
  /** Markdown, starting with a `## ` heading. */
  markdown: string;
  goals: Goal[];
}

/** What every benchmark is given. */
export interface BenchOptions {
  /** Where generated inputs are cached between runs. */
  workDir: string;
  /**
   * Small inputs and few runs: checks that the benchmark works (CI runs this) and must never fail because
   * the machine is slow; goals are still reported but mean little.
   */
  quick: boolean;
}

/** The median of some numbers (NaN for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The value below which `fraction` of the values lie (nearest rank; NaN for none). */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank]!;
}

/** The machine's load averages (1, 5, 15 minutes), for the report; "unknown" where /proc is not readable. */
export function loadAverage(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(", ");
  } catch {
    return "unknown";
  }
}

/** A field of /proc/PID/status in kB (VmHWM, VmRSS, …), or null when the process is gone. */
export function statusKilobytes(pid: number, field: string): number | null {
  return procKilobytes(`/proc/${pid}/status`, field);
}

/**
 * The proportional set size of a process in kB (its private pages, plus each shared page divided by the
 * processes that map it), or null when the process is gone. Summed over a process tree, resident sets count
 * a binary's pages once per process that runs it; proportional sets count them once.
 */
export function proportionalKilobytes(pid: number): number | null {
  return procKilobytes(`/proc/${pid}/smaps_rollup`, "Pss");
}

/** A "Field:   N kB" line of a /proc file, or null when the file (its process) is gone or has no such line. */
function procKilobytes(path: string, field: string): number | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return null;
  }
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
  return match === null ? null : Number(match[1]);
}

/**
 * Every live descendant of a process (through each of its threads' children lists) that runs a program of
 * its own: a child that still runs the parent's executable is a spawn caught between fork and exec, whose
 * pages are the parent's (counted, it once added 76 MB of PSS to a sample).
 */
export function descendants(pid: number): number[] {
  const program = executableOf(pid);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift()!;
    let tasks: Deno.DirEntry[];
    try {
      tasks = [...Deno.readDirSync(`/proc/${current}/task`)];
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children: string;
      try {
        children = Deno.readTextFileSync(`/proc/${current}/task/${task.name}/children`);
      } catch {
        continue;
      }
      for (const child of children.split(" ").filter((part) => part !== "")) {
        if (executableOf(Number(child)) === program) continue;
        found.push(Number(child));
        queue.push(Number(child));
      }
    }
  }
  return found;
}

/** The program a process runs (/proc/PID/exe), or null when it is gone. */
function executableOf(pid: number): string | null {
  try {
    return Deno.readLinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
}

/** Splits a text stream into its lines (without their line ends). */
export class LineSplitter extends TransformStream<string, string> {
  constructor() {
    let pending = "";
    super({
      transform(chunk, controller) {
        const parts = (pending + chunk).split("\n");
        pending = parts.pop()!;
        for (const part of parts) controller.enqueue(part);
      },
      flush(controller) {
        if (pending !== "") controller.enqueue(pending);
      },
    });
  }
}

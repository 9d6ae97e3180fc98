/**
 * Resource limits of the sandboxed shell: how many processes a command may have at once and how much
 * memory they may use together, so that a fork bomb or a runaway allocation ends with the call and leaves
 * the machine responsive.
 *
 * Mechanisms, best first:
 * - a cgroup of mewcode's own (cgroup v1 `pids` and `memory` hierarchies, or cgroup v2 where the
 *   controllers are delegated to mewcode's cgroup): `pids.max` and the memory limit (swap included where
 *   the kernel accounts it). The shell joins it first thing inside the sandbox, before the command runs,
 *   through its `cgroup.procs` file, the only cgroup file the sandbox may write.
 * - otherwise resource limits of the shell: `RLIMIT_NPROC` (ignored for root, and counted per user, so
 *   only where mewcode does not run as root) and `RLIMIT_DATA` (per process, not for the command's
 *   processes together).
 * What is not enforced is said plainly (`describe`), for `mewcode doctor`.
 *
 * @module
 */
import { unescapeMountPath } from "../common/mounts.ts";
import { join } from "../common/path.ts";
import { shellQuote } from "../common/shell_quote.ts";
import { formatBytes } from "../common/size.ts";
import { currentUid } from "../common/current_uid.ts";

/** The limits of one shell command (all its processes together where a cgroup is available). */
export interface ResourceLimits {
  /** Processes (and threads) at once. */
  maxProcesses: number;
  /** Bytes of memory (resident, plus swap where accounted). */
  maxMemoryBytes: number;
}

/** How one limit is enforced, or why it is not. */
export type Enforcement = { enforced: true; how: string } | { enforced: false; why: string };

/** Counters read before and after a call, to explain why a command died. */
export interface LimitCounters {
  /** Times a fork failed because the process limit was reached. */
  processLimitHits: number;
  /** Processes killed by the memory limit. */
  memoryKills: number;
}

/** The limits as applied for a session. */
export interface LimitPlan {
  limits: ResourceLimits;
  /** Shell lines run inside the sandbox before the command. */
  prologue: string[];
  /** Files the sandbox must be able to write (the cgroups' `cgroup.procs`), bound writable. */
  writableFiles: string[];
  processes: Enforcement;
  memory: Enforcement;
  /** The counters now (zero where nothing is counted); read synchronously (cgroup files never block). */
  counters(): LimitCounters;
  /** Removes the session's cgroups; the sandbox's processes must have ended. */
  close(): Promise<void>;
}

/** The exit status of the prologue when it cannot apply the limits (the command never ran). */
export const PROLOGUE_FAILED = 125;

/** The process limit when none is configured. */
export const DEFAULT_MAX_PROCESSES = 1024;
/** The most memory the default limit grants, whatever the machine has. */
const DEFAULT_MEMORY_CAP = 8 * 1024 ** 3;

/** The default limits: 1024 processes; half the machine's memory, at most 8 GiB. */
export function defaultLimits(): ResourceLimits {
  const total = totalMemoryBytes();
  const half = total === null ? DEFAULT_MEMORY_CAP : Math.floor(total / 2);
  return { maxProcesses: DEFAULT_MAX_PROCESSES, maxMemoryBytes: Math.min(half, DEFAULT_MEMORY_CAP) };
}

/** Where the limits are set up; the file paths are injectable for tests. */
export interface OpenLimitsOptions {
  limits: ResourceLimits;
  /** Whether mewcode runs as root; default: read from /proc/self/status. */
  root?: boolean;
  /** Default "/proc/self/cgroup". */
  cgroupFile?: string;
  /** Default "/proc/self/mountinfo". */
  mountInfoFile?: string;
  /** Name of the cgroups to create; default `mewcode-<pid>-<random>`. */
  name?: string;
}

/** Sets up the limits for a session: a cgroup where possible, else resource limits. Never throws. */
export async function openLimits(options: OpenLimitsOptions): Promise<LimitPlan> {
  const { limits } = options;
  const root = options.root ?? runsAsRoot();
  const name = options.name ?? `mewcode-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const cgroups = await createCgroups(name, limits, options);
  const prologue: string[] = [];
  const writableFiles: string[] = [];
  for (const group of new Set([cgroups.pids, cgroups.memory].filter((group) => group !== null))) {
    const procs = join(group.dir, "cgroup.procs");
    writableFiles.push(procs);
    prologue.push(
      `echo 0 > ${
        shellQuote(procs)
      } || { echo "mewcode: cannot join the sandbox's resource limits" >&2; exit ${PROLOGUE_FAILED}; }`,
    );
  }
  let processes: Enforcement;
  if (cgroups.pids !== null) {
    processes = { enforced: true, how: `${cgroups.pids.version} pids.max = ${limits.maxProcesses}` };
  } else if (!root) {
    prologue.push(`ulimit -u ${limits.maxProcesses} || exit ${PROLOGUE_FAILED}`);
    processes = {
      enforced: true,
      how: `RLIMIT_NPROC = ${limits.maxProcesses} (counts every process of your user)`,
    };
  } else {
    processes = {
      enforced: false,
      why:
        `no writable cgroup with the pids controller (${cgroups.problems.pids}), and RLIMIT_NPROC does not ` +
        "apply to root",
    };
  }
  let memory: Enforcement;
  if (cgroups.memory !== null) {
    memory = {
      enforced: true,
      how: `${cgroups.memory.version} memory limit = ${formatBytes(limits.maxMemoryBytes)}`,
    };
  } else {
    prologue.push(`ulimit -d ${Math.ceil(limits.maxMemoryBytes / 1024)} || exit ${PROLOGUE_FAILED}`);
    memory = {
      enforced: true,
      how:
        `RLIMIT_DATA = ${formatBytes(limits.maxMemoryBytes)} per process only, which does not count shared ` +
        `memory (memfd, shared mappings): no writable cgroup with the memory controller ` +
        `(${cgroups.problems.memory})`,
    };
  }
  return {
    limits,
    prologue,
    writableFiles,
    processes,
    memory,
    counters: () => readCounters(cgroups),
    close: () => removeCgroups(cgroups),
  };
}

/** One line per limit, for `mewcode doctor`. */
export function describeLimits(plan: LimitPlan): string[] {
  const line = (what: string, enforcement: Enforcement) =>
    enforcement.enforced ? `  ${what}: ${enforcement.how}` : `  ${what}: NOT ENFORCED: ${enforcement.why}`;
  return [line("processes", plan.processes), line("memory", plan.memory)];
}

interface Cgroup {
  version: "cgroup v1" | "cgroup v2";
  dir: string;
}

interface Cgroups {
  pids: Cgroup | null;
  memory: Cgroup | null;
  /** Why a controller has no cgroup. */
  problems: { pids: string; memory: string };
  /** Every directory created, deepest last. */
  created: string[];
}

interface Mount {
  point: string;
  /** The path inside the hierarchy that is mounted at `point` (usually "/"). */
  root: string;
  type: string;
  options: string[];
}

async function createCgroups(
  name: string,
  limits: ResourceLimits,
  options: OpenLimitsOptions,
): Promise<Cgroups> {
  const result: Cgroups = {
    pids: null,
    memory: null,
    problems: { pids: "no cgroup hierarchy found", memory: "no cgroup hierarchy found" },
    created: [],
  };
  const membership = await readMembership(options.cgroupFile ?? "/proc/self/cgroup");
  const mounts = await readMounts(options.mountInfoFile ?? "/proc/self/mountinfo");
  if (membership === null || mounts === null) return result;
  for (const controller of ["pids", "memory"] as const) {
    const v1 = mounts.find((mount) => mount.type === "cgroup" && mount.options.includes(controller));
    const path = v1 === undefined ? undefined : membership.get(controller);
    if (v1 !== undefined && path !== undefined) {
      const dir = join(v1.point, relativeTo(v1.root, path), name);
      const made = await makeGroup(dir, controller === "pids" ? pidsFiles(limits) : memoryV1Files(limits));
      if (made === null) {
        result[controller] = { version: "cgroup v1", dir };
        result.created.push(dir);
      } else {
        result.problems[controller] = made;
      }
      continue;
    }
    const v2 = mounts.find((mount) => mount.type === "cgroup2");
    const unified = membership.get("");
    if (v2 === undefined || unified === undefined) continue;
    const parent = join(v2.point, relativeTo(v2.root, unified));
    const delegated = await delegate(parent, controller);
    if (delegated !== null) {
      result.problems[controller] = delegated;
      continue;
    }
    const dir = join(parent, name);
    const files = controller === "pids" ? pidsFiles(limits) : memoryV2Files(limits);
    const made = await makeGroup(dir, files, { exists: result.created.includes(dir) });
    if (made === null) {
      result[controller] = { version: "cgroup v2", dir };
      if (!result.created.includes(dir)) result.created.push(dir);
    } else {
      result.problems[controller] = made;
    }
  }
  return result;
}

function pidsFiles(limits: ResourceLimits): [string, string, boolean][] {
  return [["pids.max", String(limits.maxProcesses), true]];
}

function memoryV1Files(limits: ResourceLimits): [string, string, boolean][] {
  const bytes = String(limits.maxMemoryBytes);
  // memsw (memory + swap) exists only where swap accounting is on; set it after the memory limit.
  return [["memory.limit_in_bytes", bytes, true], ["memory.memsw.limit_in_bytes", bytes, false]];
}

function memoryV2Files(limits: ResourceLimits): [string, string, boolean][] {
  return [["memory.max", String(limits.maxMemoryBytes), true], ["memory.swap.max", "0", false]];
}

/** Creates a cgroup and writes its limits; returns null on success, else why it failed (and cleans up). */
async function makeGroup(
  dir: string,
  files: [name: string, value: string, required: boolean][],
  options: { exists?: boolean } = {},
): Promise<string | null> {
  try {
    if (!options.exists) await Deno.mkdir(dir);
    for (const [file, value, required] of files) {
      try {
        await Deno.writeTextFile(join(dir, file), value);
      } catch (error) {
        if (required) throw error;
      }
    }
    return null;
  } catch (error) {
    if (!options.exists) await Deno.remove(dir).catch(() => undefined);
    return `cannot set up ${dir}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Makes `controller` available to children of a cgroup v2 directory; null on success, else why not. */
async function delegate(parent: string, controller: "pids" | "memory"): Promise<string | null> {
  try {
    const enabled = (await Deno.readTextFile(join(parent, "cgroup.subtree_control"))).split(/\s+/);
    if (enabled.includes(controller)) return null;
    const available = (await Deno.readTextFile(join(parent, "cgroup.controllers"))).split(/\s+/);
    if (!available.includes(controller)) {
      return `cgroup v2 has no ${controller} controller for mewcode's cgroup`;
    }
    await Deno.writeTextFile(join(parent, "cgroup.subtree_control"), `+${controller}`);
    return null;
  } catch (error) {
    return `cgroup v2 ${controller} controller not delegated to mewcode's cgroup ${parent}: ${
      error instanceof Error ? error.message : String(error)
    }`;
  }
}

function readCounters(cgroups: Cgroups): LimitCounters {
  const counters: LimitCounters = { processLimitHits: 0, memoryKills: 0 };
  if (cgroups.pids !== null) {
    counters.processLimitHits = readKeyed(join(cgroups.pids.dir, "pids.events"), "max");
  }
  if (cgroups.memory !== null) {
    const file = cgroups.memory.version === "cgroup v1" ? "memory.oom_control" : "memory.events";
    counters.memoryKills = readKeyed(join(cgroups.memory.dir, file), "oom_kill");
  }
  return counters;
}

function readKeyed(path: string, key: string): number {
  try {
    for (const line of Deno.readTextFileSync(path).split("\n")) {
      const [name, value] = line.trim().split(/\s+/);
      if (name === key) return Number(value) || 0;
    }
  } catch {
    // A counter the kernel does not offer reads as zero.
  }
  return 0;
}

async function removeCgroups(cgroups: Cgroups): Promise<void> {
  for (const dir of [...cgroups.created].reverse()) {
    // The last processes of a call may take a moment to leave after the sandbox ended.
    for (let attempt = 0; attempt < 20; attempt += 1) {
      try {
        await Deno.remove(dir);
        break;
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  }
  cgroups.created = [];
}

/** Controller name → cgroup path, from /proc/self/cgroup ("" for the cgroup v2 line). */
async function readMembership(path: string): Promise<Map<string, string> | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return null;
  }
  const membership = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (match === null) continue;
    const [, controllers = "", cgroupPath = "/"] = match;
    if (controllers === "") membership.set("", cgroupPath);
    for (const controller of controllers.split(",")) {
      if (controller !== "") membership.set(controller, cgroupPath);
    }
  }
  return membership;
}

async function readMounts(path: string): Promise<Mount[] | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return null;
  }
  const mounts: Mount[] = [];
  for (const line of text.split("\n")) {
    const [before, after] = line.split(" - ");
    if (before === undefined || after === undefined) continue;
    const fields = before.split(" ");
    const [type = "", , superOptions = ""] = after.split(" ");
    const root = fields[3];
    const point = fields[4];
    if (root === undefined || point === undefined) continue;
    if (type !== "cgroup" && type !== "cgroup2") continue;
    mounts.push({
      point: unescapeMountPath(point),
      root: unescapeMountPath(root),
      type,
      options: superOptions.split(","),
    });
  }
  return mounts;
}

/** The part of `path` below `root` (both absolute), "" when equal. */
function relativeTo(root: string, path: string): string {
  if (root === "/" || root === "") return path.replace(/^\/+/, "");
  if (path === root) return "";
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path.replace(/^\/+/, "");
}

/**
 * Whether mewcode runs as root. It once read /proc/self/status, which Deno refuses without --allow-all: as
 * root, RLIMIT_NPROC was then set and reported enforced, though the kernel does not apply it to root.
 */
function runsAsRoot(): boolean {
  return currentUid() === 0;
}

/** MemTotal from /proc/meminfo (Deno.systemMemoryInfo would need --allow-sys); null elsewhere. */
function totalMemoryBytes(): number | null {
  try {
    const match = /^MemTotal:\s+(\d+) kB$/m.exec(Deno.readTextFileSync("/proc/meminfo"));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

/** Notes for the model when a call reached a limit: the counters before the call and after it. */
export function limitNotes(limits: ResourceLimits, before: LimitCounters, after: LimitCounters): string[] {
  const notes: string[] = [];
  if (after.processLimitHits > before.processLimitHits) {
    notes.push(
      `The command reached the sandbox's limit of ${limits.maxProcesses} processes; process creation ` +
        "failed. Run fewer processes at once (for example fewer parallel jobs)",
    );
  }
  if (after.memoryKills > before.memoryKills) {
    notes.push(
      `A process of the command was killed for going over the sandbox's memory limit of ` +
        `${formatBytes(limits.maxMemoryBytes)}. Use less memory (smaller inputs, fewer parallel jobs)`,
    );
  }
  return notes;
}

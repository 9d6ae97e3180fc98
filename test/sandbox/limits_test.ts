import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { formatBytes, parseSize } from "../../src/common/size.ts";
import { openLimits } from "../../src/sandbox/limits.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

const LIMITS = { maxProcesses: 64, maxMemoryBytes: 256 * 1024 * 1024 };

Deno.test("parseSize and formatBytes read and write sizes", async (t) => {
  for (
    const [text, bytes] of [
      ["512M", 512 * 1024 ** 2],
      ["2G", 2 * 1024 ** 3],
      ["1.5g", 1.5 * 1024 ** 3],
      ["4096", 4096],
      ["64KiB", 64 * 1024],
      ["lots", null],
      ["-1G", null],
      ["0", null],
    ] as const
  ) {
    await t.step(text, () => equal(parseSize(text), bytes));
  }
  equal(formatBytes(256 * 1024 ** 2), "256 MiB");
  equal(formatBytes(1.5 * 1024 ** 3), "1.5 GiB");
});

Deno.test("openLimits creates cgroup v1 groups with the limits and joins them in the prologue", async () => {
  await using fake = await createTempWorkspace("mewcode-cgroups-");
  const pids = join(fake.root, "pids");
  const memory = join(fake.root, "memory");
  await Deno.mkdir(join(memory, "session-scope"), { recursive: true });
  await Deno.mkdir(pids);
  await Deno.writeTextFile(join(fake.root, "cgroup"), "8:pids:/\n4:memory:/session-scope\n0::/\n");
  await Deno.writeTextFile(
    join(fake.root, "mountinfo"),
    `30 20 0:26 / ${pids} rw,relatime - cgroup cgroup rw,pids\n` +
      `31 20 0:27 / ${memory} rw,relatime - cgroup cgroup rw,memory\n`,
  );
  const plan = await openLimits({
    limits: LIMITS,
    root: true,
    cgroupFile: join(fake.root, "cgroup"),
    mountInfoFile: join(fake.root, "mountinfo"),
    name: "mewcode-test",
  });
  equal(await Deno.readTextFile(join(pids, "mewcode-test", "pids.max")), "64");
  equal(
    await Deno.readTextFile(join(memory, "session-scope", "mewcode-test", "memory.limit_in_bytes")),
    String(LIMITS.maxMemoryBytes),
  );
  deepStrictEqual(plan.writableFiles, [
    join(pids, "mewcode-test", "cgroup.procs"),
    join(memory, "session-scope", "mewcode-test", "cgroup.procs"),
  ]);
  ok(plan.prologue.every((line) => line.startsWith("echo 0 > ")), plan.prologue.join("\n"));
  equal(plan.processes.enforced, true);
  equal(plan.memory.enforced, true);
  await Deno.writeTextFile(join(pids, "mewcode-test", "pids.events"), "max 3\n");
  equal(plan.counters().processLimitHits, 3);
  // Plain directories with files stand in for cgroups here, so remove their files before close.
  for (const dir of [join(pids, "mewcode-test"), join(memory, "session-scope", "mewcode-test")]) {
    for await (const entry of Deno.readDir(dir)) await Deno.remove(join(dir, entry.name));
  }
  await plan.close();
  equal(await Array.fromAsync(Deno.readDir(pids)).then((entries) => entries.length), 0);
});

Deno.test("openLimits falls back to resource limits and says what is not enforced without cgroups", async () => {
  const asRoot = await openLimits({ limits: LIMITS, root: true, cgroupFile: "/nonexistent", name: "x" });
  equal(asRoot.processes.enforced, false);
  ok(!asRoot.processes.enforced && asRoot.processes.why.includes("RLIMIT_NPROC does not apply to root"));
  ok(asRoot.memory.enforced && asRoot.memory.how.includes("per process"));
  ok(asRoot.prologue.some((line) => line.startsWith("ulimit -d 262144")));
  const asUser = await openLimits({ limits: LIMITS, root: false, cgroupFile: "/nonexistent", name: "x" });
  equal(asUser.processes.enforced, true);
  ok(asUser.prologue.includes("ulimit -u 64 || exit 125"));
});

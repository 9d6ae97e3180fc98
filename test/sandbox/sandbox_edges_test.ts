/**
 * The edges outside testing got through: Unix sockets, root-owned host state, home secrets, mewcode's own
 * state, resource abuse. Each test attacks through the real sandbox and then checks the host.
 */
import { deepStrictEqual, equal, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exists, exitCodeOf, hostDirectory, openSandbox, outputOf, runIn, SECRET } from "./_sandbox.ts";
import { processesWith } from "../_fakes/processes.ts";

const CONNECT = (path: string) =>
  `/usr/bin/perl -e 'use Socket; socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; ` +
  `connect($s, pack_sockaddr_un("${path}")) or die "connect: $!\\n"; print "connected\\n"'`;

Deno.test("The sandbox cannot connect to a Unix socket, and sees no host /run", async () => {
  await using workspace = await createTempWorkspace();
  const path = join(workspace.root, "service.sock");
  using listener = Deno.listen({ transport: "unix", path });
  const accepted: string[] = [];
  const accepting = (async () => {
    for await (const connection of listener) {
      accepted.push("connection");
      connection.close();
    }
  })().catch(() => {});
  for (const network of [false, true]) {
    await using sandbox = await openSandbox(workspace.root, "workspace-write", { network });
    const { result } = await runIn(sandbox, `${CONNECT(path)}; ls -A /run | wc -l`);
    ok(outputOf(result).startsWith("socket: Operation not permitted\n0"), outputOf(result));
  }
  deepStrictEqual(accepted, [], "the host's socket accepted nothing");
  listener.close();
  await accepting;
});

Deno.test("Run as root, the sandbox can write no host state outside the workspace", async () => {
  if (Deno.uid() !== 0) return; // The attack needs root; as another user the kernel already refuses.
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const marker = `mewcode-probe-${crypto.randomUUID()}`;
  // Write the current value back: harmless if the write went through, which the test then reports.
  const { result: sysctl } = await runIn(
    sandbox,
    'v=$(cat /proc/sys/vm/swappiness); echo "$v" > /proc/sys/vm/swappiness && echo sysctl-written; ' +
      "echo 1 > /proc/sys/kernel/sysrq 2>/dev/null && echo sysrq-written; true",
  );
  equal(outputOf(sysctl).includes("written"), false, outputOf(sysctl));
  // Every mount the sandbox sees as writable: try to create a file at its top.
  const { result: mounts } = await runIn(
    sandbox,
    `awk '{ split($6, o, ","); if (o[1] == "rw") print $5 }' /proc/self/mountinfo | sort -u | ` +
      `while read -r point; do touch "$point/${marker}" 2>/dev/null && echo "$point"; done`,
  );
  const written = outputOf(mounts).split("\n").filter((line) => line !== "");
  ok(written.length > 0, "some private mounts are writable (the workspace, /tmp)");
  for (const point of written) {
    if (point === workspace.root || point.startsWith(`${workspace.root}/`)) continue;
    equal(await exists(join(point, marker)), false, `${point} is host state the sandbox wrote`);
  }
  await Deno.remove(join(workspace.root, marker)).catch(() => undefined);
});

Deno.test("The sandbox sees an empty home: no secrets, toolchains read-only, symlinked folders tolerated", async () => {
  await using workspace = await createTempWorkspace();
  await using home = await hostDirectory("mewcode-home-");
  await using elsewhere = await hostDirectory("mewcode-aws-");
  const secrets: Record<string, string> = {
    ".npmrc": `//registry.npmjs.org/:_authToken=${SECRET}`,
    ".cargo/credentials.toml": `token = "${SECRET}"`,
    ".bash_history": `export TOKEN=${SECRET}`,
    ".config/service/token": SECRET,
    ".mewcode/projects/-other/session.jsonl": SECRET,
    ".ssh/id_ed25519": SECRET,
  };
  for (const [relative, content] of Object.entries(secrets)) {
    await Deno.mkdir(join(home.path, relative, ".."), { recursive: true });
    await Deno.writeTextFile(join(home.path, relative), content);
  }
  await Deno.writeTextFile(join(elsewhere.path, "credentials"), SECRET);
  await Deno.symlink(elsewhere.path, join(home.path, ".aws"));
  await Deno.symlink(join(home.path, "missing"), join(home.path, ".gnupg"));
  await Deno.mkdir(join(home.path, ".cargo/bin"), { recursive: true });
  await Deno.writeTextFile(join(home.path, ".cargo/bin/tool"), "#!/bin/sh\necho toolchain works\n");
  await Deno.chmod(join(home.path, ".cargo/bin/tool"), 0o755);
  await using sandbox = await openSandbox(workspace.root, "workspace-write", {
    env: { ...Deno.env.toObject(), HOME: home.path, PATH: `${home.path}/.cargo/bin:/usr/bin:/bin` },
  });
  equal(sandbox.unavailable, null, "a symlinked or dangling credential folder does not stop the sandbox");
  const { result } = await runIn(
    sandbox,
    "cat ~/.npmrc ~/.cargo/credentials.toml ~/.bash_history ~/.config/service/token ~/.aws/credentials " +
      "~/.ssh/id_ed25519 ~/.mewcode/projects/-other/session.jsonl 2>/dev/null; " +
      "find ~ -mindepth 1 -maxdepth 2 | sort; tool; echo new > ~/.cargo/bin/tool2 || echo toolchain-read-only",
  );
  const output = outputOf(result);
  equal(output.includes(SECRET), false, output);
  const lines = output.split("\n");
  deepStrictEqual(lines.slice(0, 3), [`${home.path}/.cargo`, `${home.path}/.cargo/bin`, "toolchain works"]);
  ok(lines[3]?.endsWith(`${home.path}/.cargo/bin/tool2: Read-only file system`), lines[3]);
  equal(lines[4], "toolchain-read-only");
  equal(lines.length, 5, output);
});

Deno.test("The sandbox hides credentials even when the workspace is the home directory", async () => {
  await using home = await hostDirectory("mewcode-home-");
  await Deno.mkdir(join(home.path, ".ssh"));
  await Deno.writeTextFile(join(home.path, ".ssh/id_ed25519"), SECRET);
  await Deno.writeTextFile(join(home.path, ".npmrc"), SECRET);
  await using sandbox = await openSandbox(home.path, "workspace-write", {
    env: { ...Deno.env.toObject(), HOME: home.path },
  });
  const { result } = await runIn(
    sandbox,
    "cat ~/.ssh/id_ed25519 ~/.npmrc; echo new > ~/.ssh/id_ed25519; touch ~/ok",
  );
  equal(result.content.includes(SECRET), false);
  equal(await Deno.readTextFile(join(home.path, ".ssh/id_ed25519")), SECRET);
  equal(await exists(join(home.path, "ok")), true);
});

Deno.test("mewcode's state folder inside the workspace is hidden from the shell", async () => {
  await using workspace = await createTempWorkspace();
  const state = join(workspace.root, "state");
  await Deno.mkdir(join(state, "projects"), { recursive: true });
  await Deno.writeTextFile(join(state, "projects/session.jsonl"), SECRET);
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { excluded: [state] });
  const { result } = await runIn(
    sandbox,
    "cat state/projects/session.jsonl; ls -A state; echo x > state/new",
  );
  equal(result.content.includes(SECRET), false);
  equal(await exists(join(state, "new")), false, "writes land in the sandbox's own tmpfs");
});

Deno.test("A fork bomb ends at the process limit with the call, and leaves no process behind", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write", {
    limits: { maxProcesses: 64, maxMemoryBytes: 512 * 1024 * 1024 },
  });
  // Every process of the call carries the marker in its command line (the shell's script).
  const marker = `bomb_${crypto.randomUUID().replaceAll("-", "")}`;
  const { result, notes } = await runIn(
    sandbox,
    `${marker}() { ${marker} | ${marker} & }; ${marker}; sleep 2`,
    {
      timeout: 8_000,
    },
  );
  ok(
    notes.some((note) => note.includes("limit of 64 processes")) ||
      result.content.includes("Resource temporarily unavailable"),
    `${result.content}\n${notes.join("\n")}`,
  );
  // The machine stayed responsive, and nothing of the call is left.
  const echo = await new Deno.Command("/bin/echo", { args: ["alive"], stdout: "piped" }).output();
  equal(new TextDecoder().decode(echo.stdout), "alive\n");
  equal(await processesWith(marker), 0, "no process of the call survived");
});

Deno.test("A runaway allocation is killed at the memory limit and the model is told", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write", {
    limits: { maxProcesses: 256, maxMemoryBytes: 128 * 1024 * 1024 },
  });
  const { result, notes } = await runIn(
    sandbox,
    '/usr/bin/perl -e \'$x = "a" x (400 * 1024 * 1024); print length($x), "\\n"\'; echo after=$?',
  );
  const output = outputOf(result);
  ok(!output.includes("419430400"), output);
  ok(output.includes("after=137") || output.includes("Out of memory"), output);
  if (sandbox.describe().join("\n").includes("cgroup")) {
    ok(notes.some((note) => note.includes("memory limit of 128 MiB")), notes.join("\n"));
  }
  notEqual(exitCodeOf(result), -1);
});

Deno.test("Every writable tmpfs of the sandbox together holds at most the memory limit, not half the machine's each", async () => {
  await using workspace = await createTempWorkspace();
  const limit = 64 * 1024 * 1024;
  await using sandbox = await openSandbox(workspace.root, "workspace-write", {
    limits: { maxProcesses: 256, maxMemoryBytes: limit },
  });
  // tmpfs pages are memory, which a memory cgroup charges to the sandbox where there is one; the sizes
  // bound them where there is none. Every tmpfs mounted writable, each counted once (the one on top).
  const { result } = await runIn(
    sandbox,
    `awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "tmpfs" && $6 ~ /^rw/) print $5 }' /proc/self/mountinfo | ` +
      `sort -u | while read -r dir; do stat -f -c "%b %S $dir" "$dir"; done`,
  );
  const output = outputOf(result);
  const sizes = new Map<string, number>();
  for (const line of output.trim().split("\n")) {
    const [blocks, blockSize, dir] = line.split(" ");
    sizes.set(dir!, Number(blocks) * Number(blockSize));
  }
  for (const dir of ["/tmp", "/var/tmp", "/dev/shm", "/run"]) ok(sizes.has(dir), output);
  const total = [...sizes.values()].reduce((sum, size) => sum + size, 0);
  ok(total <= limit + sizes.size * 1024 * 1024, `${total} bytes in all:\n${output}`);
  equal(sizes.get("/tmp"), limit / 2, output);
  equal(sizes.get("/run"), 1024 * 1024, output);
  // A write beyond a folder's share fails: the host's memory is not the sandbox's to fill.
  const { result: filled } = await runIn(sandbox, "head -c 2M /dev/zero > /run/fill; echo status=$?");
  ok(/No space left on device/.test(outputOf(filled)) && /status=1/.test(outputOf(filled)), outputOf(filled));
});

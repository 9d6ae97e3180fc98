import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { filterProgram, unixSocketFilter } from "../../src/sandbox/seccomp.ts";

const BWRAP = "/usr/bin/bwrap";

/** Runs perl under bubblewrap with the filter (or without), returning what the script printed. */
async function underFilter(script: string, filter: Uint8Array | null): Promise<string> {
  const child = new Deno.Command(BWRAP, {
    args: [
      "--die-with-parent",
      "--unshare-pid",
      "--unshare-net",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      ...(filter === null ? [] : ["--seccomp", "0"]),
      "/usr/bin/perl",
      "-e",
      script,
    ],
    stdin: filter === null ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (filter !== null) {
    const writer = child.stdin.getWriter();
    await writer.write(filter);
    await writer.close();
  }
  const output = await child.output();
  return new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
}

const PROBE = `
use Socket;
my $unix = socket(my $u, PF_UNIX, SOCK_STREAM, 0) ? "created" : "refused: $!";
print "unix $unix\\n";
my $inet = socket(my $i, PF_INET, SOCK_STREAM, 0) ? "created" : "refused: $!";
print "inet $inet\\n";
my $pair = socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, PF_UNSPEC) ? "created" : "refused: $!";
print "pair $pair\\n";
my $ring = syscall(425, 8, 0);
print "io_uring " . ($ring == -1 ? "refused: $!" : "created") . "\\n";
`;

Deno.test("unixSocketFilter refuses socket(AF_UNIX) and io_uring but allows other sockets and socketpair", async () => {
  const filter = unixSocketFilter();
  ok(filter !== null, "a filter for this architecture");
  const filtered = await underFilter(PROBE, filter);
  ok(filtered.includes("unix refused: Operation not permitted"), filtered);
  ok(filtered.includes("inet created"), filtered);
  ok(filtered.includes("pair created"), filtered);
  ok(filtered.includes("io_uring refused: Function not implemented"), filtered);
  // Without the filter the same script creates the Unix socket: the filter is what refuses it.
  const unfiltered = await underFilter(PROBE, null);
  ok(unfiltered.includes("unix created"), unfiltered);
});

Deno.test("unixSocketFilter builds programs for x86_64 and aarch64 only", () => {
  equal(unixSocketFilter("riscv64"), null);
  for (const arch of ["x86_64", "aarch64"] as const) {
    const program = filterProgram(arch);
    const bytes = unixSocketFilter(arch)!;
    equal(bytes.length, program.length * 8);
    // Every jump lands inside the program, and it ends in a return.
    program.forEach((instruction, index) => {
      if ((instruction.code & 0x07) === 0x05) {
        ok(index + 1 + instruction.jt < program.length && index + 1 + instruction.jf < program.length, arch);
      }
    });
    equal(program.at(-1)?.code, 0x06);
  }
  // The architecture check comes first: another ABI never reaches the socket rule.
  deepStrictEqual(filterProgram("aarch64").slice(0, 3).map((instruction) => instruction.code), [
    0x20,
    0x15,
    0x06,
  ]);
});

import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { filterProgram, sandboxFilter } from "../../src/sandbox/seccomp.ts";

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

Deno.test("sandboxFilter refuses socket(AF_UNIX) and io_uring but allows other sockets and socketpair", async () => {
  const filter = sandboxFilter();
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

Deno.test("sandboxFilter builds programs for x86_64 and aarch64 only", () => {
  equal(sandboxFilter("riscv64"), null);
  for (const arch of ["x86_64", "aarch64"] as const) {
    const program = filterProgram(arch);
    const bytes = sandboxFilter(arch)!;
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

/** Each probe's system call numbers on this machine (the filter's test runs where bubblewrap does). */
const CALLS = Deno.build.arch === "aarch64"
  ? { keyctl: 219, addKey: 217, openat2: 437 }
  : { keyctl: 250, addKey: 248, openat2: 437 };

const SET_ID_PROBE = `
use Fcntl;
sub try { my ($name, $ok) = @_; print "$name " . ($ok ? "done" : "refused: $!") . "\\n"; }
open(my $f, ">", "/tmp/file") or die; close $f;
try("chmod-plain", chmod(0755, "/tmp/file"));
try("chmod-setuid", chmod(04755, "/tmp/file"));
try("chmod-setgid", chmod(02755, "/tmp/file"));
open(my $h, "<", "/tmp/file") or die;
try("fchmod-setuid", chmod(04755, $h));
try("create-setuid", sysopen(my $c, "/tmp/created", O_CREAT | O_WRONLY, 04755));
try("mkdir-setgid", mkdir("/tmp/dir", 02775));
try("mkdir-plain", mkdir("/tmp/plain", 0755));
my @st = stat("/tmp/file");
printf "mode %o\\n", $st[2] & 07777;
try("keyctl", syscall(${CALLS.keyctl}, 0, -4, 0) >= 0);
# syscall() passes strings by address, from variables (a literal is read-only to it). The key would go to
# the process keyring (-2), which ends with the process.
my ($type, $description, $payload, $path) = ("user", "probe", "secret", "/tmp/file");
try("add_key", syscall(${CALLS.addKey}, $type, $description, $payload, 6, -2) >= 0);
try("openat2", syscall(${CALLS.openat2}, -100, $path, 0, 0) >= 0);
use Socket;
try("inet6", socket(my $i6, PF_INET6, SOCK_STREAM, 0));
try("netlink", socket(my $nl, 16, 3, 0));
try("vsock", socket(my $vs, 40, SOCK_STREAM, 0));
try("alg", socket(my $alg, 38, 5, 0));
`;

Deno.test("sandboxFilter refuses set-ID modes, the keyring, openat2 and socket families other than IP and netlink", async () => {
  const filtered = await underFilter(SET_ID_PROBE, sandboxFilter());
  for (
    const line of [
      "chmod-plain done",
      "chmod-setuid refused: Operation not permitted",
      "chmod-setgid refused: Operation not permitted",
      "fchmod-setuid refused: Operation not permitted",
      "create-setuid refused: Operation not permitted",
      "mkdir-setgid refused: Operation not permitted",
      "mkdir-plain done",
      "mode 755",
      "keyctl refused: Operation not permitted",
      "add_key refused: Operation not permitted",
      "openat2 refused: Function not implemented",
      "inet6 done",
      "netlink done",
      "vsock refused: Address family not supported by protocol",
      "alg refused: Address family not supported by protocol",
    ]
  ) ok(filtered.includes(line), `${line}\n---\n${filtered}`);
  // Without the filter the same script sets the bits and reaches the keyring: the filter is what refuses.
  const unfiltered = await underFilter(SET_ID_PROBE, null);
  ok(unfiltered.includes("chmod-setuid done"), unfiltered);
  ok(unfiltered.includes("create-setuid done"), unfiltered);
  ok(unfiltered.includes("keyctl done"), unfiltered);
});

/**
 * The seccomp filter of the sandboxed shell, as a classic BPF program for bubblewrap's `--seccomp FD`.
 *
 * What it closes, each a way out that the mounts and namespaces leave open:
 * - Sockets. "No network" (a new network namespace) does not stop a connection to a pathname socket: the
 *   D-Bus bus, `docker.sock`, ssh and gpg agents, database sockets. `socket(AF_UNIX, …)` fails with EPERM,
 *   so no such socket can be created at all (a `socketpair`, which reaches nothing outside the process tree,
 *   stays allowed). Of the other families only IPv4, IPv6 and netlink (which `ip` and libc's address lookup
 *   use) are allowed, in the sandbox's own network namespace; every other family fails with EAFNOSUPPORT,
 *   as on a kernel without it: vsock, which no network namespace isolates (it reaches the hypervisor, or
 *   Windows from WSL2), and the rarely used families whose kernel code is an attack surface of its own
 *   (AF_ALG, AF_TIPC, AF_RDS, Bluetooth, …). The io_uring calls fail with ENOSYS, since io_uring can create
 *   sockets without passing through `socket(2)`.
 * - The kernel keyring. Keyrings belong to the user, not to a namespace: a sandbox running as the user (or
 *   as root) could read the host's keys (Kerberos tickets, ecryptfs and NFS credentials, tokens tools keep
 *   there) and add keys the host would use. `add_key`, `request_key` and `keyctl` fail with EPERM.
 * - Set-user-ID and set-group-ID files. The workspace is mounted `nosuid` in the sandbox only: a setuid copy
 *   of a program made there is setuid on the host, where any local user who can reach the workspace runs it
 *   as the owner (root, in a container). Every call that sets a file's mode (`chmod`, `fchmod`,
 *   `fchmodat`, `fchmodat2`) or creates one with a mode (`open`, `openat`, `creat`, `mkdir`, `mkdirat`,
 *   `mknod`, `mknodat`) fails with EPERM when the mode has S_ISUID or S_ISGID; `openat2`, whose mode the
 *   filter cannot read (it is in a structure), fails with ENOSYS, and libc falls back to `openat`.
 * - Other ABIs. Every call of another architecture's ABI (32-bit x86 through `int 0x80`, x32, 32-bit ARM),
 *   whose arguments the filter could not inspect the same way, fails with ENOSYS.
 *
 * The program is built here, byte by byte, for the running architecture (x86_64 or aarch64); on any
 * other there is no filter and the sandbox refuses to start (fail closed).
 *
 * @module
 */

/** The architectures a filter can be built for. */
export type FilterArch = "x86_64" | "aarch64";

/** What the filter blocks, for `mewcode doctor` and the README. */
export const SANDBOX_FILTER_SUMMARY =
  "socket(AF_UNIX) fails with EPERM, socket families other than IPv4, IPv6 and netlink with EAFNOSUPPORT; " +
  "io_uring_setup/enter/register fail with ENOSYS; add_key/request_key/keyctl fail with EPERM; setting " +
  "or creating a file with the set-user-ID or set-group-ID bit fails with EPERM; " +
  "system calls of other ABIs (32-bit, x32) fail with ENOSYS";

// Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const AF_UNIX = 1;
/** The socket families allowed: AF_INET, AF_INET6, AF_NETLINK. */
const ALLOWED_FAMILIES = [2, 10, 16];
/** S_ISUID | S_ISGID. */
const SET_ID_BITS = 0o6000;

// Offsets in struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARGS = 16;

/** The audit architecture and the system call numbers the filter looks at, per architecture. */
interface ArchCalls {
  audit: number;
  /** The bit x32 system calls carry in their number, or null. */
  x32Bit: number | null;
  socket: number;
  /** Calls refused outright with EPERM (the keyring). */
  refused: readonly number[];
  /** Calls that fail with ENOSYS (openat2: its mode cannot be inspected). */
  missing: readonly number[];
  /** Calls that take a file mode, with the index of the mode argument. */
  modes: readonly (readonly [call: number, argument: number])[];
}

/** The calls of x86_64 that take a file mode: [number, index of the mode argument]. */
const X86_64_MODE_CALLS: ArchCalls["modes"] = [
  [2, 2], // open(path, flags, mode)
  [85, 1], // creat(path, mode)
  [90, 1], // chmod(path, mode)
  [91, 1], // fchmod(fd, mode)
  [83, 1], // mkdir(path, mode)
  [133, 1], // mknod(path, mode, dev)
  [257, 3], // openat(dirfd, path, flags, mode)
  [258, 2], // mkdirat(dirfd, path, mode)
  [259, 2], // mknodat(dirfd, path, mode, dev)
  [268, 2], // fchmodat(dirfd, path, mode)
  [452, 2], // fchmodat2(dirfd, path, mode, flags)
];

/** The same for aarch64 (the generic table: no open, creat, chmod, mkdir or mknod). */
const AARCH64_MODE_CALLS: ArchCalls["modes"] = [
  [56, 3], // openat
  [34, 2], // mkdirat
  [33, 2], // mknodat
  [52, 1], // fchmod
  [53, 2], // fchmodat
  [452, 2], // fchmodat2
];

const ARCHES: Readonly<Record<FilterArch, ArchCalls>> = {
  // AUDIT_ARCH_X86_64; x32 system calls carry __X32_SYSCALL_BIT in their number.
  x86_64: {
    audit: 0xc000003e,
    x32Bit: 0x40000000,
    socket: 41,
    // add_key, request_key, keyctl.
    refused: [248, 249, 250],
    // openat2.
    missing: [437],
    modes: X86_64_MODE_CALLS,
  },
  // AUDIT_ARCH_AARCH64; 32-bit ARM tasks report AUDIT_ARCH_ARM and are refused by the arch check.
  aarch64: {
    audit: 0xc00000b7,
    x32Bit: null,
    socket: 198,
    refused: [217, 218, 219],
    missing: [437],
    modes: AARCH64_MODE_CALLS,
  },
};
/** io_uring_setup, io_uring_enter and io_uring_register share their numbers on both architectures. */
const IO_URING_FIRST = 425;
const IO_URING_END = 428;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** The filter for `arch` (default: the running one), or null where no filter can be built. */
export function sandboxFilter(arch: string = Deno.build.arch): Uint8Array | null {
  if (arch !== "x86_64" && arch !== "aarch64") return null;
  return encode(filterProgram(arch));
}

/** The program as instructions; exported for tests that check its structure. */
export function filterProgram(arch: FilterArch): Instruction[] {
  const calls = ARCHES[arch];
  const errno = (value: number) => SECCOMP_RET_ERRNO | value;
  const program: Instruction[] = [];
  const emit = (code: number, k: number, jt = 0, jf = 0) => program.push({ code, jt, jf, k });
  const loadArgument = (index: number) => emit(BPF_LD_W_ABS, OFFSET_ARGS + 8 * index);
  // Another ABI: refuse everything (its calls cannot be inspected the same way).
  emit(BPF_LD_W_ABS, OFFSET_ARCH);
  emit(BPF_JMP_JEQ_K, calls.audit, 1, 0);
  emit(BPF_RET_K, errno(ENOSYS));
  emit(BPF_LD_W_ABS, OFFSET_NR);
  if (calls.x32Bit !== null) {
    emit(BPF_JMP_JGE_K, calls.x32Bit, 0, 1);
    emit(BPF_RET_K, errno(ENOSYS));
  }
  // The accumulator holds the call's number until a block below matches it; each block then returns.
  for (const call of calls.refused) {
    emit(BPF_JMP_JEQ_K, call, 0, 1);
    emit(BPF_RET_K, errno(EPERM));
  }
  for (const call of calls.missing) {
    emit(BPF_JMP_JEQ_K, call, 0, 1);
    emit(BPF_RET_K, errno(ENOSYS));
  }
  // socket(domain, …): AF_UNIX is refused, the allowed families pass, any other is "not supported". The
  // block: the load, the AF_UNIX check, one check per allowed family, then three returns.
  const families = ALLOWED_FAMILIES.length;
  emit(BPF_JMP_JEQ_K, calls.socket, 0, families + 5);
  loadArgument(0);
  // To the second return (EPERM), past the family checks and the first return.
  emit(BPF_JMP_JEQ_K, AF_UNIX, families + 1, 0);
  ALLOWED_FAMILIES.forEach((family, index) => {
    // To the third return (allow), past the remaining checks and the first two returns.
    emit(BPF_JMP_JEQ_K, family, families - index - 1 + 2, 0);
  });
  emit(BPF_RET_K, errno(EAFNOSUPPORT));
  emit(BPF_RET_K, errno(EPERM));
  emit(BPF_RET_K, SECCOMP_RET_ALLOW);
  // A mode with S_ISUID or S_ISGID (the low word of the mode argument).
  for (const [call, argument] of calls.modes) {
    emit(BPF_JMP_JEQ_K, call, 0, 4);
    loadArgument(argument);
    emit(BPF_JMP_JSET_K, SET_ID_BITS, 0, 1);
    emit(BPF_RET_K, errno(EPERM));
    emit(BPF_RET_K, SECCOMP_RET_ALLOW);
  }
  // io_uring_setup, io_uring_enter, io_uring_register.
  emit(BPF_JMP_JGE_K, IO_URING_FIRST, 0, 2);
  emit(BPF_JMP_JGE_K, IO_URING_END, 1, 0);
  emit(BPF_RET_K, errno(ENOSYS));
  emit(BPF_RET_K, SECCOMP_RET_ALLOW);
  return program;
}

function encode(program: readonly Instruction[]): Uint8Array {
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach((instruction, index) => {
    const offset = index * 8;
    view.setUint16(offset, instruction.code, true);
    view.setUint8(offset + 2, instruction.jt);
    view.setUint8(offset + 3, instruction.jf);
    view.setUint32(offset + 4, instruction.k >>> 0, true);
  });
  return bytes;
}

/**
 * The seccomp filter of the sandboxed shell, as a classic BPF program for bubblewrap's `--seccomp FD`.
 *
 * "No network" (a new network namespace) does not stop a connection to a pathname socket: the D-Bus
 * bus, `docker.sock`, ssh and gpg agents, database sockets. The filter makes `socket(AF_UNIX, …)` fail
 * with EPERM, so no such socket can be created at all (a `socketpair`, which reaches nothing outside the
 * process tree, stays allowed), and makes the io_uring calls fail with ENOSYS, since io_uring can create
 * sockets without passing through `socket(2)`. Every call of another architecture's ABI (32-bit x86
 * through `int 0x80`, x32, 32-bit ARM), whose `socketcall` the filter could not inspect, fails with ENOSYS.
 *
 * The program is built here, byte by byte, for the running architecture (x86_64 or aarch64); on any
 * other there is no filter and the sandbox refuses to start (fail closed).
 *
 * @module
 */

/** The architectures a filter can be built for. */
export type FilterArch = "x86_64" | "aarch64";

/** What the filter blocks, for `mewcode doctor` and the README. */
export const UNIX_SOCKET_FILTER_SUMMARY =
  "socket(AF_UNIX) fails with EPERM; io_uring_setup/enter/register fail with ENOSYS; " +
  "system calls of other ABIs (32-bit, x32) fail with ENOSYS";

// Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const AF_UNIX = 1;

// Offsets in struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

/** The audit architecture and system call numbers of each supported architecture. */
const ARCHES: Readonly<Record<FilterArch, { audit: number; socket: number; x32Bit: number | null }>> = {
  // AUDIT_ARCH_X86_64; x32 system calls carry __X32_SYSCALL_BIT in their number.
  x86_64: { audit: 0xc000003e, socket: 41, x32Bit: 0x40000000 },
  // AUDIT_ARCH_AARCH64; 32-bit ARM tasks report AUDIT_ARCH_ARM and are refused by the arch check.
  aarch64: { audit: 0xc00000b7, socket: 198, x32Bit: null },
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
export function unixSocketFilter(arch: string = Deno.build.arch): Uint8Array | null {
  if (arch !== "x86_64" && arch !== "aarch64") return null;
  return encode(filterProgram(arch));
}

/** The program as instructions; exported for tests that check its structure. */
export function filterProgram(arch: FilterArch): Instruction[] {
  const { audit, socket, x32Bit } = ARCHES[arch];
  const errno = (value: number) => SECCOMP_RET_ERRNO | value;
  const program: Instruction[] = [];
  const emit = (code: number, k: number, jt = 0, jf = 0) => program.push({ code, jt, jf, k });
  // Another ABI: refuse everything (its socket calls cannot be inspected the same way).
  emit(BPF_LD_W_ABS, OFFSET_ARCH);
  emit(BPF_JMP_JEQ_K, audit, 1, 0);
  emit(BPF_RET_K, errno(ENOSYS));
  emit(BPF_LD_W_ABS, OFFSET_NR);
  if (x32Bit !== null) {
    emit(BPF_JMP_JGE_K, x32Bit, 0, 1);
    emit(BPF_RET_K, errno(ENOSYS));
  }
  // socket(domain, …): AF_UNIX is refused; the accumulator is reloaded with the number afterwards.
  emit(BPF_JMP_JEQ_K, socket, 0, 4);
  emit(BPF_LD_W_ABS, OFFSET_ARG0_LOW);
  emit(BPF_JMP_JEQ_K, AF_UNIX, 0, 1);
  emit(BPF_RET_K, errno(EPERM));
  emit(BPF_RET_K, SECCOMP_RET_ALLOW);
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

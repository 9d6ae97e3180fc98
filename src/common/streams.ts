/**
 * Small stream helpers shared by the code that talks to child processes.
 *
 * @module
 */

/**
 * Writes `bytes` to a child's standard input and closes it; a child that exited before reading everything
 * is not an error here (its exit status and output say why). bubblewrap reads its seccomp program this way,
 * to the end, before it starts the sandbox.
 */
export async function writeAndClose(stdin: WritableStream<Uint8Array>, bytes: Uint8Array): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(bytes);
    await writer.close();
  } catch {
    // The child exited early.
  } finally {
    writer.releaseLock();
  }
}

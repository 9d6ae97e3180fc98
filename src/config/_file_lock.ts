/**
 * An exclusive lock across processes for a file mewcode reads, changes and replaces (`trust.json`): a lock
 * file beside it, held with `flock` from the read to the atomic replace, so two mewcode processes changing
 * it at once cannot each write back what they read and lose the other's change (a revoked trust coming
 * back, a trust given in another folder dropped). The kernel lets the lock go when its process ends, so a
 * crashed process never leaves it held.
 *
 * The lock file lives in the user's own state folder; one that is a symbolic link, not a regular file, or
 * another user's is refused rather than opened, so a planted name cannot make mewcode open (or create) a
 * file elsewhere.
 *
 * @module
 */
import { currentUid } from "../common/current_uid.ts";
import { describeError } from "../common/errors.ts";
import { lstatIfExists } from "../common/fs.ts";

/** How long a change waits for another process's by default: far longer than a change takes (milliseconds). */
export const DEFAULT_LOCK_WAIT_MS = 10_000;
/** How often a waiting change tries the lock again. */
const RETRY_MS = 10;
const LOCK_FILE_MODE = 0o600;

/** Why a lock could not be taken, for the caller to put after what it was doing. */
export class FileLockError extends Error {}

/**
 * Runs `change` while holding the exclusive lock of `lockPath` (made, mode 0600, when missing), then lets it
 * go. Waits at most `waitMs` for another holder; throws a FileLockError when it cannot take the lock, and
 * whatever `change` throws.
 */
export async function withFileLock<T>(
  lockPath: string,
  change: () => Promise<T>,
  options: { waitMs?: number | undefined } = {},
): Promise<T> {
  const file = await openLockFile(lockPath);
  try {
    await acquire(file, lockPath, options.waitMs ?? DEFAULT_LOCK_WAIT_MS);
    // A lock file removed and made anew meanwhile would be a second lock: only the one at the name counts.
    await checkStillAtPath(file, lockPath);
    return await change();
  } finally {
    // Closing the last descriptor of the file lets the lock go.
    file.close();
  }
}

/**
 * Opens the lock file without following a link at its name: a new file with O_EXCL (which fails on any
 * existing name, a link included), an existing one only when it is a regular file of the current user;
 * then checks that the file opened is the one looked at.
 */
async function openLockFile(path: string): Promise<Deno.FsFile> {
  let found = await lstatOrRefuse(path);
  if (found === null) {
    try {
      return await Deno.open(path, { read: true, write: true, createNew: true, mode: LOCK_FILE_MODE });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        throw new FileLockError(`cannot create its lock file "${path}": ${describeError(error)}`);
      }
      // Made meanwhile (by another mewcode, or not): look at what it is.
      found = await lstatOrRefuse(path);
      if (found === null) {
        throw new FileLockError(`its lock file "${path}" vanished as it was made; try again`);
      }
    }
  }
  refuseOddFile(path, found);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    throw new FileLockError(`cannot open its lock file "${path}": ${describeError(error)}`);
  }
  try {
    await checkStillAtPath(file, path);
  } catch (error) {
    file.close();
    throw error;
  }
  return file;
}

async function lstatOrRefuse(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await lstatIfExists(path);
  } catch (error) {
    throw new FileLockError(`cannot look at its lock file "${path}": ${describeError(error)}`);
  }
}

/** Checks that `file` is the regular file of the current user now at `path`, not one swapped in or out. */
async function checkStillAtPath(file: Deno.FsFile, path: string): Promise<void> {
  const [opened, atPath] = [await file.stat(), await lstatOrRefuse(path)];
  if (atPath === null || atPath.isSymlink || opened.dev !== atPath.dev || opened.ino !== atPath.ino) {
    throw new FileLockError(`its lock file "${path}" was replaced while it was opened; try again`);
  }
  refuseOddFile(path, opened);
}

function refuseOddFile(path: string, info: Deno.FileInfo): void {
  const refuse = (state: string) =>
    new FileLockError(`its lock file "${path}" ${state}; remove it (mewcode makes a new one) and try again`);
  if (info.isSymlink) throw refuse("is a symbolic link, which could lead mewcode to a file elsewhere");
  if (!info.isFile) throw refuse("is not a regular file");
  const uid = currentUid();
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw refuse(`belongs to another user (uid ${info.uid}), who could hold it to block every change`);
  }
}

/** Takes the lock, trying again until `waitMs` have passed: a bounded wait, unlike a blocking `lock`. */
async function acquire(file: Deno.FsFile, path: string, waitMs: number): Promise<void> {
  const deadline = performance.now() + waitMs;
  while (true) {
    try {
      if (await file.tryLock(true)) return;
    } catch (error) {
      throw new FileLockError(`cannot lock "${path}": ${describeError(error)}`);
    }
    if (performance.now() >= deadline) {
      throw new FileLockError(
        `another mewcode process has held its lock file "${path}" for over ${waitMs / 1000} s, far longer ` +
          "than a change takes: if one is stuck, end it, then try again",
      );
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

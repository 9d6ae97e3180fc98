/**
 * The user id mewcode runs as. `Deno.uid()` needs `--allow-sys=uid`, which mewcode's runtime flags grant
 * (scripts/runtime_flags.txt); a Deno run without it (a test, another embedding) reads /proc/self/status when
 * it may (--allow-all), or else the owner of a file made in the temporary folder to find out, and removed:
 * the owner a new file gets is the process's effective user id (measured on the way to the first request:
 * 1.0 ms against 0.2). Once per process.
 *
 * @module
 */

let known: number | null | undefined;

/** The effective user id, or null when neither Deno, /proc nor a new file can tell. */
export function currentUid(): number | null {
  if (known === undefined) known = lookUp();
  return known;
}

function lookUp(): number | null {
  try {
    return Deno.uid();
  } catch {
    // Not allowed: try /proc, then a new file.
  }
  try {
    const match = /^Uid:\s+\d+\s+(\d+)/m.exec(Deno.readTextFileSync("/proc/self/status"));
    if (match !== null) return Number(match[1]);
  } catch {
    // Not allowed, or not Linux.
  }
  let probe: string | null = null;
  try {
    probe = Deno.makeTempFileSync({ prefix: ".mewcode-uid-" });
    return Deno.lstatSync(probe).uid;
  } catch {
    return null;
  } finally {
    if (probe !== null) {
      try {
        Deno.removeSync(probe);
      } catch {
        // Gone already.
      }
    }
  }
}

import { deepStrictEqual, equal, match, ok, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  parseTranscript,
  readTranscript,
  SessionInUseError,
  Transcript,
} from "../../src/session/transcript.ts";
import { startSwapper } from "../_fakes/swapper.ts";

Deno.test("Transcript appends one JSON line per entry under projects/<slug>/<session>.jsonl", async () => {
  const home = await Deno.makeTempDir();
  try {
    let now = 1_700_000_000_000;
    const transcript = await Transcript.create({
      home,
      root: "/home/ada/app",
      sessionId: "s1",
      clock: () => now++,
    });
    equal(transcript.path, join(home, "projects", "-home-ada-app", "s1.jsonl"));
    equal(transcript.sessionDir, join(home, "projects", "-home-ada-app", "s1"));
    transcript.append({ type: "user-message", content: "hi" });
    // Flushed as it happens: visible before close.
    equal((await Deno.readTextFile(transcript.path)).split("\n").length, 2);
    transcript.append({ type: "warning", message: "careful" });
    transcript.close();
    const { records, torn } = await readTranscript(transcript.path);
    equal(torn, false);
    deepStrictEqual(records, [
      { type: "user-message", content: "hi", ts: 1_700_000_000_000 },
      { type: "warning", message: "careful", ts: 1_700_000_000_001 },
    ]);
    throws(() => transcript.append({ type: "warning", message: "late" }), /closed/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("Transcript reopened with the same session id appends instead of overwriting", async () => {
  const home = await Deno.makeTempDir();
  try {
    for (const message of ["one", "two"]) {
      using transcript = await Transcript.create({ home, root: "/w", sessionId: "same" });
      transcript.append({ type: "warning", message });
    }
    const { records } = await readTranscript(join(home, "projects", "-w", "same.jsonl"));
    deepStrictEqual(records.map((record) => record.type === "warning" && record.message), ["one", "two"]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("Transcript continued after a torn last line drops it, so the next record is a line of its own", async (t) => {
  const good = JSON.stringify({ type: "warning", message: "kept", ts: 1 });
  /** Continues a session whose file holds `text`, appends one record, and returns the file's text. */
  async function continued(text: string): Promise<string> {
    const home = await Deno.makeTempDir();
    try {
      const path = join(home, "projects", "-w", "torn.jsonl");
      await Deno.mkdir(join(home, "projects", "-w"), { recursive: true, mode: 0o700 });
      await Deno.writeTextFile(path, text, { mode: 0o600 });
      using transcript = await Transcript.create({ home, root: "/w", sessionId: "torn", clock: () => 2 });
      transcript.append({ type: "warning", message: "next" });
      return await Deno.readTextFile(path);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  }
  const next = JSON.stringify({ type: "warning", message: "next", ts: 2 });

  await t.step("torn bytes after complete lines are cut off", async () => {
    const text = await continued(`${good}\n{"type":"tool-call-end","id":"x","sta`);
    equal(text, `${good}\n${next}\n`);
    deepStrictEqual(parseTranscript(text).torn, false);
  });
  await t.step("a torn line longer than one read of the file's end is cut off whole", async () => {
    const text = await continued(`${good}\n{"type":"compaction","summary":"${"s".repeat(200_000)}`);
    equal(text, `${good}\n${next}\n`);
  });
  await t.step("a file of nothing but torn bytes is emptied", async () => {
    equal(await continued(`{"type":"session-st`), `${next}\n`);
  });
  await t.step("a last record complete but for its line feed is kept, and gets it", async () => {
    equal(await continued(`${good}\n${good}`), `${good}\n${good}\n${next}\n`);
  });
  await t.step("a file that ends with a line feed is left as it is", async () => {
    equal(await continued(`${good}\n`), `${good}\n${next}\n`);
  });
});

Deno.test("Transcript refuses a session another open transcript holds, writes nothing, and can take it once closed", async () => {
  const home = await Deno.makeTempDir();
  try {
    // A new session's file is locked as well.
    const first = await Transcript.create({ home, root: "/w", sessionId: "busy", exclusive: true });
    first.append({ type: "warning", message: "first" });
    // The first run is killed while writing a line, as far as a second run can tell: not torn, only unfinished.
    await Deno.writeTextFile(first.path, '{"type":"warning","mess', { append: true });
    const before = await Deno.readTextFile(first.path);
    const error = await Transcript.create({ home, root: "/w", sessionId: "busy" }).then(
      () => null,
      (error: unknown) => error,
    );
    ok(error instanceof SessionInUseError, String(error));
    match(error.message, /^Session busy is in use by another mewcode run/);
    match(error.message, /wait for that run to end/);
    match(error.message, /start a new session/);
    equal(await Deno.readTextFile(first.path), before, "nothing written, nothing cut off");
    first.close();
    using second = await Transcript.create({ home, root: "/w", sessionId: "busy", clock: () => 3 });
    second.append({ type: "warning", message: "second" });
    deepStrictEqual(
      (await readTranscript(second.path)).records.map((record) =>
        record.type === "warning" && record.message
      ),
      ["first", "second"],
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("Transcript waits a moment for a lock let go at once, as by a process this one was starting", async () => {
  // A process being started holds a copy of every open file, and so its lock, until it runs its program
  // (close-on-exec): a transcript closed then and opened again at once was found locked (a flaky test, once).
  const home = await Deno.makeTempDir();
  try {
    const first = await Transcript.create({ home, root: "/w", sessionId: "held", exclusive: true });
    first.close();
    const copy = await Deno.open(first.path, { read: true });
    copy.lockSync(true);
    const letGo = setTimeout(() => copy.close(), 30);
    try {
      using again = await Transcript.create({ home, root: "/w", sessionId: "held" });
      again.append({ type: "warning", message: "taken" });
    } finally {
      clearTimeout(letGo);
      try {
        copy.close();
      } catch {
        // Closed by the timer.
      }
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("parseTranscript tolerates a torn last line and rejects a broken line elsewhere", () => {
  const good = JSON.stringify({ type: "warning", message: "a", ts: 1 });
  const parsed = parseTranscript(`${good}\n{"type":"tool-call-end","id":"x","sta`);
  equal(parsed.torn, true);
  equal(parsed.records.length, 1);
  throws(() => parseTranscript(`{"type":\n${good}\n`), /line 1/);
  deepStrictEqual(parseTranscript(""), { records: [], torn: false });
});

Deno.test("Transcript rejects a session id that could leave the folder", async () => {
  const home = await Deno.makeTempDir();
  try {
    let failed = false;
    await Transcript.create({ home, root: "/w", sessionId: "../x" }).catch(() => (failed = true));
    ok(failed);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/** A `$MEWCODE_HOME` and a folder outside it (where a planted link points), removed when disposed. */
async function createTempHome(): Promise<{ home: string; outside: string } & AsyncDisposable> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-transcript-" }));
  const home = join(base, "home");
  const outside = join(base, "outside");
  await Deno.mkdir(home);
  await Deno.mkdir(outside);
  return { home, outside, [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }) };
}

const ROOT = "/home/ada/app";
const SECRET = "the conversation, with a secret";

/** Creates the transcript, and if that works, writes the secret through it: what a session would do. */
async function writeSecret(home: string, options: { sessionId: string; exclusive: boolean }): Promise<void> {
  using transcript = await Transcript.create({ home, root: ROOT, ...options });
  transcript.append({ type: "user-message", content: SECRET });
}

/** The message of what `promise` threw, or null when it did not. */
async function refusalOf(promise: Promise<void>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function namesIn(folder: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(folder))).map((entry) => entry.name).sort();
}

function mode(path: string): number | null {
  const found = Deno.lstatSync(path).mode;
  return found === null ? null : found & 0o777;
}

Deno.test("Transcript refuses a symbolic link planted on its way and writes nothing through it", async (t) => {
  await t.step("the projects folder", async () => {
    await using temp = await createTempHome();
    const link = join(temp.home, "projects");
    await Deno.symlink(temp.outside, link);
    const refusal = await refusalOf(writeSecret(temp.home, { sessionId: "s1", exclusive: true }));
    deepStrictEqual(await namesIn(temp.outside), []);
    equal(
      refusal,
      `Cannot keep the session transcript at "${link}": it is a symbolic link, which could send the ` +
        "transcript elsewhere; remove the link (mewcode creates the folder itself) and try again",
    );
  });
  await t.step("the workspace's folder", async () => {
    await using temp = await createTempHome();
    const link = join(temp.home, "projects", "-home-ada-app");
    await Deno.mkdir(join(temp.home, "projects"));
    await Deno.symlink(temp.outside, link);
    const refusal = await refusalOf(writeSecret(temp.home, { sessionId: "s1", exclusive: true }));
    deepStrictEqual(await namesIn(temp.outside), []);
    match(
      refusal ?? "",
      new RegExp(`^Cannot keep the session transcript at "${link}": it is a symbolic link`),
    );
  });
  for (const exclusive of [false, true]) {
    await t.step(`the transcript file (${exclusive ? "new session" : "resumed session"})`, async () => {
      await using temp = await createTempHome();
      const target = join(temp.outside, "chosen.txt");
      await Deno.writeTextFile(target, "precious\n");
      const link = join(temp.home, "projects", "-home-ada-app", "s1.jsonl");
      await Deno.mkdir(join(temp.home, "projects", "-home-ada-app"), { recursive: true });
      await Deno.symlink(target, link);
      const refusal = await refusalOf(writeSecret(temp.home, { sessionId: "s1", exclusive }));
      equal(await Deno.readTextFile(target), "precious\n");
      match(
        refusal ?? "",
        new RegExp(`^Cannot keep the session transcript at "${link}": it is a symbolic link`),
      );
    });
  }
});

Deno.test("Transcript refuses to resume into a file with other hard links", async () => {
  await using temp = await createTempHome();
  const target = join(temp.outside, "chosen.txt");
  await Deno.writeTextFile(target, "precious\n");
  await Deno.mkdir(join(temp.home, "projects", "-home-ada-app"), { recursive: true });
  await Deno.link(target, join(temp.home, "projects", "-home-ada-app", "s1.jsonl"));
  const refusal = await refusalOf(writeSecret(temp.home, { sessionId: "s1", exclusive: false }));
  equal(await Deno.readTextFile(target), "precious\n");
  match(refusal ?? "", /: it has 2 hard links, so writing it would change another file too; /);
});

Deno.test("Transcript refuses a non-regular file planted as the transcript", async () => {
  await using temp = await createTempHome();
  const path = join(temp.home, "projects", "-home-ada-app", "s1.jsonl");
  await Deno.mkdir(path, { recursive: true });
  await rejects(writeSecret(temp.home, { sessionId: "s1", exclusive: false }), {
    message: `Cannot keep the session transcript at "${path}": it is not a regular file; move it away and ` +
      "try again",
  });
});

/**
 * Creates a transcript in a Deno with mewcode's file permissions only (no --allow-sys), from a script
 * written to `folder`; the message of what it threw, or null.
 */
async function refusalWithoutSys(home: string, folder: string): Promise<string | null> {
  const script = join(folder, "write_secret.ts");
  await Deno.writeTextFile(
    script,
    `import { Transcript } from ${
      JSON.stringify(new URL("../../src/session/transcript.ts", import.meta.url).href)
    };
try {
  using transcript = await Transcript.create({ home: Deno.args[0], root: ${
      JSON.stringify(ROOT)
    }, sessionId: "s1" });
  transcript.append({ type: "user-message", content: "secret" });
  console.log("null");
} catch (error) {
  console.log(JSON.stringify(error.message));
}`,
  );
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-check", "--no-prompt", "--allow-read", "--allow-write", script, home],
    stdin: "null",
  }).output();
  equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

Deno.test({
  name: "Transcript refuses a folder of another user on its way, without the permission to ask for its uid",
  // Only root can give a folder away to test this.
  ignore: Deno.build.os !== "linux" || Deno.uid() !== 0,
  async fn() {
    await using temp = await createTempHome();
    const folder = join(temp.home, "projects", "-home-ada-app");
    await Deno.mkdir(folder, { recursive: true });
    await Deno.chown(folder, 65534, 65534);
    const refusal = await refusalWithoutSys(temp.home, temp.outside);
    deepStrictEqual(await namesIn(folder), []);
    deepStrictEqual(await namesIn(temp.home), ["projects"], "the file made to learn the uid was removed");
    equal(
      refusal,
      `Cannot keep the session transcript at "${folder}": it belongs to another user (uid 65534); ` +
        "remove it, or set MEWCODE_HOME to a folder of your own",
    );
  },
});

Deno.test({
  name: "Transcript tightens loose folders to 0700 and a loose transcript to 0600",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using temp = await createTempHome();
    const projects = join(temp.home, "projects");
    const folder = join(projects, "-home-ada-app");
    const path = join(folder, "s1.jsonl");
    await Deno.mkdir(folder, { recursive: true });
    await Deno.writeTextFile(path, "");
    await Deno.chmod(projects, 0o755);
    await Deno.chmod(folder, 0o755);
    await Deno.chmod(path, 0o644);
    await writeSecret(temp.home, { sessionId: "s1", exclusive: false });
    deepStrictEqual([mode(projects), mode(folder), mode(path)], [0o700, 0o700, 0o600]);
    equal((await readTranscript(path)).records.length, 1);
  },
});

Deno.test({
  name: "Transcript never appends through a link swapped in for the file between its look and its open",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using temp = await createTempHome();
    const target = join(temp.outside, "chosen.txt");
    await Deno.writeTextFile(target, "precious\n");
    const folder = join(temp.home, "projects", "-home-ada-app");
    const path = join(folder, "s1.jsonl");
    const link = join(folder, "planted");
    await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(path, "", { mode: 0o600 });
    await Deno.symlink(target, link);
    let opened = 0;
    {
      await using _swapper = await startSwapper(path, link);
      const deadline = Date.now() + 2_000;
      while (Date.now() < deadline) {
        // Refusals are expected; the file outside must never change.
        await writeSecret(temp.home, { sessionId: "s1", exclusive: false }).then(
          () => opened++,
          () => undefined,
        );
      }
    }
    equal(await Deno.readTextFile(target), "precious\n");
    ok(opened > 0, "the transcript was never opened");
  },
});

Deno.test("Transcript refuses to continue a session another run wrote to after it was read, and takes one unchanged", async () => {
  const home = await Deno.makeTempDir();
  try {
    const first = await Transcript.create({ home, root: "/w", sessionId: "grown", exclusive: true });
    first.append({ type: "user-message", content: "first" });
    first.close();
    const { bytes, stamp } = await readTranscript(first.path);
    equal(bytes, (await Deno.stat(first.path)).size);
    equal(stamp.bytes, bytes);
    // Another run continues the session while this one waits (for its standard input, say).
    const other = await Transcript.create({ home, root: "/w", sessionId: "grown" });
    other.append({ type: "user-message", content: "the other run's turn" });
    other.close();
    const grown = await Deno.readTextFile(first.path);
    const error = await Transcript.create({ home, root: "/w", sessionId: "grown", expected: stamp })
      .then(
        () => null,
        (error: unknown) => error,
      );
    ok(error instanceof SessionInUseError, String(error));
    match(
      error.message,
      /^Session grown changed after this run read it \(".*grown\.jsonl" was \d+ bytes, now \d+\)/,
    );
    match(error.message, /continue the session again$/);
    equal(await Deno.readTextFile(first.path), grown, "nothing written");
    const reread = await readTranscript(first.path);
    using again = await Transcript.create({
      home,
      root: "/w",
      sessionId: "grown",
      expected: reread.stamp,
    });
    again.append({ type: "user-message", content: "this run's turn" });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("Transcript says what to do when MEWCODE_HOME, or a folder above it, is a file", async (t) => {
  const parent = await Deno.makeTempDir();
  try {
    const file = join(parent, "home-is-a-file");
    await Deno.writeTextFile(file, "");
    for (const home of [file, join(file, "below")]) {
      await t.step(home.slice(parent.length), async () => {
        await rejects(
          Transcript.create({ home, root: "/w", sessionId: "s" }),
          new RegExp(
            `^Error: Cannot keep sessions in the state folder "${home}" \\(MEWCODE_HOME, default ~/\\.mewcode\\): ` +
              "it, or a folder on its path, is not a folder \\(a file, or a link to nothing\\): point " +
              "MEWCODE_HOME at a folder, or move that entry away$",
          ),
        );
      });
    }
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("Transcript refuses to continue a session another run rewrote to the same size after it was read", async () => {
  const home = await Deno.makeTempDir();
  try {
    const first = await Transcript.create({ home, root: "/w", sessionId: "same", exclusive: true });
    first.append({ type: "user-message", content: "first" });
    first.close();
    // A run killed while writing left a torn last line; this run reads the session (and skips that line).
    const torn = '{"type":"assistant-message","message":{"role":"assistant","content":[{"type":"text","te';
    await Deno.writeTextFile(first.path, torn, { append: true });
    const { stamp } = await readTranscript(first.path);
    // Another run continues it meanwhile: it cuts the torn line and appends its own records, here as many
    // bytes as it cut (a size check alone takes the file for unchanged).
    const other = await Transcript.create({ home, root: "/w", sessionId: "same" });
    other.close();
    const cut = (await Deno.stat(first.path)).size;
    const filler = `{"type":"user-message","content":"${"x".repeat(stamp.bytes - cut - 40)}"`;
    const line = `${filler}${",".padEnd(stamp.bytes - cut - filler.length - 2, " ")}}\n`;
    await Deno.writeTextFile(first.path, line, { append: true });
    equal((await Deno.stat(first.path)).size, stamp.bytes, "the same size as read");
    const error = await Transcript.create({ home, root: "/w", sessionId: "same", expected: stamp }).then(
      () => null,
      (error: unknown) => error,
    );
    ok(error instanceof SessionInUseError, String(error));
    match(
      error.message,
      /^Session same changed after this run read it \(".*same\.jsonl" was rewritten at the same size/,
    );
    const reread = await readTranscript(first.path);
    using again = await Transcript.create({ home, root: "/w", sessionId: "same", expected: reread.stamp });
    again.append({ type: "user-message", content: "this run's turn" });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

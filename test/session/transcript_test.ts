import { deepStrictEqual, equal, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { parseTranscript, readTranscript, Transcript } from "../../src/session/transcript.ts";

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

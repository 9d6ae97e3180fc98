import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { dirname, join } from "node:path";
import { historyPath, openHistory } from "../../../src/cli/interactive/history.ts";
import { projectDir } from "../../../src/config/home.ts";

/** A mewcode home and a workspace path in a temporary folder, removed afterwards. */
async function homeDir(): Promise<{ home: string; root: string; base: string } & AsyncDisposable> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-history-" }));
  const home = join(base, "home");
  await Deno.mkdir(home);
  return {
    home,
    root: join(base, "workspace"),
    base,
    [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }),
  };
}

Deno.test("historyPath is history.jsonl in the workspace's project folder", async () => {
  equal(await historyPath("/h", "/home/ada/app"), "/h/projects/-home-ada-app/history.jsonl");
});

Deno.test("History keeps prompts across sessions, multi-line ones whole, in a 0600 file of JSON strings", async () => {
  await using dir = await homeDir();
  const first = await openHistory(dir.home, dir.root);
  deepEqual(first.entries, []);
  await first.add("fix the tests");
  await first.add('line one\nline two "quoted"');
  await first.add("unicode 世界 🐱");
  const again = await openHistory(dir.home, dir.root);
  deepEqual(again.entries, ["fix the tests", 'line one\nline two "quoted"', "unicode 世界 🐱"]);
  const path = await historyPath(dir.home, dir.root);
  equal(
    await Deno.readTextFile(path),
    ['"fix the tests"', '"line one\\nline two \\"quoted\\""', '"unicode 世界 🐱"', ""].join("\n"),
  );
  equal((await Deno.stat(path)).mode! & 0o777, 0o600);
});

Deno.test("History skips blank prompts and a repeat of the last one", async () => {
  await using dir = await homeDir();
  const history = await openHistory(dir.home, dir.root);
  for (const text of ["a", "a", "  ", "", "b", "a"]) await history.add(text);
  deepEqual(history.entries, ["a", "b", "a"]);
  deepEqual((await openHistory(dir.home, dir.root)).entries, ["a", "b", "a"]);
});

Deno.test("History skips torn and garbage lines and appends after a torn last line", async () => {
  await using dir = await homeDir();
  const path = await historyPath(dir.home, dir.root);
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, ['"one"', "not json", "42", '{"a":1}', '"two"', '"torn'].join("\n"), {
    mode: 0o600,
  });
  const history = await openHistory(dir.home, dir.root);
  deepEqual(history.entries, ["one", "two"]);
  await history.add("three");
  deepEqual((await openHistory(dir.home, dir.root)).entries, ["one", "two", "three"]);
});

Deno.test("History keeps the newest entries and trims the file when it grows past twice the cap", async () => {
  await using dir = await homeDir();
  const history = await openHistory(dir.home, dir.root, { maxEntries: 5 });
  for (let index = 1; index <= 11; index++) await history.add(`prompt ${index}`);
  deepEqual(history.entries, ["prompt 7", "prompt 8", "prompt 9", "prompt 10", "prompt 11"]);
  const path = await historyPath(dir.home, dir.root);
  const lines = (await Deno.readTextFile(path)).trimEnd().split("\n");
  equal(lines.length, 5, "the 11th entry made the file longer than 10 lines, so it was trimmed");
  equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  deepEqual((await openHistory(dir.home, dir.root, { maxEntries: 5 })).entries, history.entries);
  deepEqual((await openHistory(dir.home, dir.root, { maxEntries: 2 })).entries, ["prompt 10", "prompt 11"]);
});

Deno.test("History tightens the mode of an existing file to 0600", async () => {
  await using dir = await homeDir();
  const path = await historyPath(dir.home, dir.root);
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, '"old"\n');
  await Deno.chmod(path, 0o644);
  await (await openHistory(dir.home, dir.root)).add("new");
  equal((await Deno.stat(path)).mode! & 0o777, 0o600);
});

Deno.test("History remembers a very long prompt for the session without writing it", async () => {
  await using dir = await homeDir();
  const history = await openHistory(dir.home, dir.root);
  const long = "x".repeat(100_000);
  await history.add(long);
  await history.add("short");
  deepEqual(history.entries, [long, "short"]);
  deepEqual((await openHistory(dir.home, dir.root)).entries, ["short"]);
});

Deno.test("History refuses a symbolic link planted as the history file and never writes through it", async () => {
  await using dir = await homeDir();
  const path = await historyPath(dir.home, dir.root);
  const target = join(dir.base, "elsewhere.txt");
  await Deno.writeTextFile(target, "precious\n");
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.symlink(target, path);
  const warnings: string[] = [];
  const history = await openHistory(dir.home, dir.root, { onWarning: (message) => warnings.push(message) });
  deepEqual(history.entries, []);
  await history.add("secret prompt");
  deepEqual(history.entries, ["secret prompt"]);
  equal(await Deno.readTextFile(target), "precious\n");
  equal(warnings.length, 1);
  match(warnings[0] ?? "", /symbolic link; history is kept for this session only$/);
});

Deno.test("History refuses a symbolic link planted as the workspace's folder", async () => {
  await using dir = await homeDir();
  const folder = await projectDir(dir.home, dir.root);
  const elsewhere = join(dir.base, "elsewhere");
  await Deno.mkdir(elsewhere);
  await Deno.mkdir(dirname(folder), { recursive: true });
  await Deno.symlink(elsewhere, folder);
  const warnings: string[] = [];
  const history = await openHistory(dir.home, dir.root, { onWarning: (message) => warnings.push(message) });
  await history.add("secret prompt");
  deepEqual([...Deno.readDirSync(elsewhere)], []);
  equal(warnings.length, 1);
  match(warnings[0] ?? "", /is a symbolic link/);
});

Deno.test("History refuses a symbolic link planted as the projects folder", async () => {
  await using dir = await homeDir();
  const elsewhere = join(dir.base, "elsewhere");
  await Deno.mkdir(elsewhere);
  await Deno.symlink(elsewhere, join(dir.home, "projects"));
  const warnings: string[] = [];
  const history = await openHistory(dir.home, dir.root, { onWarning: (message) => warnings.push(message) });
  await history.add("secret prompt");
  deepEqual([...Deno.readDirSync(elsewhere)], []);
  equal(warnings.length, 1);
});

Deno.test("History reports a write failure once and goes on in memory", async () => {
  await using dir = await homeDir();
  const path = await historyPath(dir.home, dir.root);
  await Deno.mkdir(path, { recursive: true });
  const warnings: string[] = [];
  const history = await openHistory(dir.home, dir.root, { onWarning: (message) => warnings.push(message) });
  await history.add("one");
  await history.add("two");
  deepEqual(history.entries, ["one", "two"]);
  equal(warnings.length, 1);
  ok(warnings[0]?.includes("not a regular file"), warnings[0]);
});

Deno.test("openHistory rejects a cap that is not a positive integer", async () => {
  await using dir = await homeDir();
  await rejects(openHistory(dir.home, dir.root, { maxEntries: 0 }), RangeError);
});

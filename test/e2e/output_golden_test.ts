/**
 * Golden files pin what `mewcode -p` prints on stdout in each output format, so a change to the contract
 * scripts depend on is a deliberate one: run with UPDATE_GOLDEN=1 to rewrite them, and review the diff.
 * What differs from run to run (paths, the session id, durations) is replaced by placeholders first.
 */
import { equal, ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";

const GOLDEN_DIR = fileURLToPath(new URL("./golden/", import.meta.url));
const UPDATE = Deno.env.get("UPDATE_GOLDEN") === "1";

/**
 * The run every format is pinned on: a text block and a WriteFile, then the answer. (A writer runs once
 * the response is complete, so the order of the lines does not depend on timing; a read-only call would
 * start while the response streams.)
 */
async function runScenario(format: string, extra: string[] = []): Promise<string> {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().usage({ input_tokens: 120, output_tokens: 30 }).text("Writing the notes.").toolUse("WriteFile", {
      path: box.path("notes.txt"),
      content: "hello\n",
    }, { id: "toolu_write" }),
    turn().usage({ input_tokens: 160, output_tokens: 12, cache_read_input_tokens: 100 }).text(
      "The notes say hello.",
    ).stop("end_turn"),
  ]);
  const run = await box.exec(server, [
    "-p",
    "Write hello into notes.txt",
    "--permission-mode",
    "acceptEdits",
    "--output-format",
    format,
    ...extra,
  ]);
  equal(run.code, 0, run.stderr);
  return normalize(run.stdout, box);
}

/** Replaces what differs between runs with placeholders. */
function normalize(stdout: string, box: E2eWorkspace): string {
  return stdout
    .replaceAll(box.root, "<workspace>")
    .replaceAll(box.home, "<home>")
    .replace(/<home>\/projects\/[^/"]+\//g, "<home>/projects/<workspace slug>/")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<session>")
    .replace(/"(duration_ms|duration_api_ms)":\d+/g, '"$1":0')
    .replace(/"mewcode_version":"[^"]*"/g, '"mewcode_version":"<version>"')
    .replace(
      /"total_cost_usd":[0-9.e-]+/g,
      (match) => `"total_cost_usd":${Number(match.split(":")[1]).toFixed(8)}`,
    );
}

async function checkGolden(name: string, actual: string): Promise<void> {
  const path = `${GOLDEN_DIR}${name}`;
  if (UPDATE) {
    await Deno.mkdir(GOLDEN_DIR, { recursive: true });
    await Deno.writeTextFile(path, actual);
    return;
  }
  const expected = await Deno.readTextFile(path);
  equal(actual, expected, `stdout differs from ${path}; if the change is intended, run with UPDATE_GOLDEN=1`);
}

Deno.test("golden: --output-format text prints the answer and nothing else", async () => {
  await checkGolden("text.txt", await runScenario("text"));
});

Deno.test("golden: --output-format json prints one result object", async () => {
  const stdout = await runScenario("json");
  const result = JSON.parse(stdout);
  equal(result.schema_version, 1);
  await checkGolden("result.json", stdout);
});

Deno.test("golden: --output-format stream-json prints one versioned event per line, result last", async () => {
  const stdout = await runScenario("stream-json", ["--include-partial-messages"]);
  const lines = stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
  for (const line of lines) {
    ok(line.schema_version === 1 && line.session_id === "<session>", JSON.stringify(line));
  }
  equal(lines[0].type, "system");
  equal(lines.at(-1).type, "result");
  await checkGolden("stream.jsonl", stdout);
});

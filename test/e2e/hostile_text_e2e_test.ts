/**
 * End to end: what a hostile repository puts in the text mewcode's commands print (its settings' rules, the
 * name of its folder) reaches the terminal shown, never obeyed: no escape sequence (a window title, a
 * clipboard write with OSC 52, hidden text), no bell, no bidirectional override. Each command runs as a user
 * runs it, through the launcher; its standard output and error are checked byte for byte.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

/** What a terminal acts on instead of showing: C0 controls but the line break, DEL, C1, bidi overrides. */
// deno-lint-ignore no-control-regex -- finding control characters is the point
const OBEYED = /[\x00-\x09\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]/u;

function assertShown(what: string, text: string): void {
  const found = OBEYED.exec(text);
  ok(
    found === null,
    `${what} wrote U+${found?.[0].codePointAt(0)?.toString(16)} raw:\n${JSON.stringify(text)}`,
  );
}

/**
 * A workspace whose project settings hold rules with an OSC sequence, a colour and a bidi override: `root`,
 * named `name` inside a new temporary folder (removed with it).
 */
async function hostileWorkspace(name: string) {
  const parent = await createTempWorkspace("mewcode-hostile-text-");
  const root = join(parent.root, name);
  await Deno.mkdir(join(root, ".mewcode"), { recursive: true });
  const workspace = Object.assign(parent, { root });
  await Deno.writeTextFile(
    join(root, ".mewcode", "settings.json"),
    JSON.stringify({
      permissions: {
        deny: ["Bash(rm \u001b]0;PWNED\u0007 -rf)"],
        ask: ["Bash(curl \u202eevil)"],
        allow: ["ReadFile(\u001b[31mred)"],
      },
    }),
  );
  return workspace;
}

Deno.test("e2e: a hostile repository's settings reach -p's warnings shown, not obeyed", async () => {
  await using workspace = await hostileWorkspace("project");
  await using home = await createTempWorkspace("mewcode-hostile-home-");
  await using server = await startFakeAnthropic([turn().text("Done.").stop("end_turn")]);
  const run = await runMewcode(["-p", "hi"], {
    cwd: workspace.root,
    env: { ...server.env(), MEWCODE_HOME: home.root, NO_COLOR: "1" },
  });
  equal(run.code, 0, run.stderr);
  ok(run.stderr.includes("␛]0;PWNED␇"), run.stderr);
  assertShown("-p (stderr)", run.stderr);
  assertShown("-p (stdout)", run.stdout);
});

Deno.test("e2e: permissions and doctor show a hostile repository's rules and folder name, not obey them", async (t) => {
  await using workspace = await hostileWorkspace("project-\u001b]0;PWNED\u0007-\u202e");
  await using home = await createTempWorkspace("mewcode-hostile-home-");
  // doctor asks the API for its models.
  await using server = await startFakeAnthropic([]);
  const env = { ...server.env(), MEWCODE_HOME: home.root, NO_COLOR: "1" };
  for (const args of [["permissions"], ["doctor"]]) {
    await t.step(`mewcode ${args.join(" ")}`, async () => {
      const run = await runMewcode(args, { cwd: workspace.root, env });
      ok(`${run.stdout}${run.stderr}`.includes("␛"), `${run.stdout}\n${run.stderr}`);
      assertShown(`${args.join(" ")} (stdout)`, run.stdout);
      assertShown(`${args.join(" ")} (stderr)`, run.stderr);
    });
  }
  await t.step("JSON keeps the exact text, its control characters escaped", async () => {
    const run = await runMewcode(["permissions", "--json"], { cwd: workspace.root, env });
    assertShown("permissions --json", run.stdout);
    // Escaped, the same value: read back, it names the folder exactly.
    ok(
      JSON.stringify(JSON.parse(run.stdout)).includes(JSON.stringify(workspace.root).slice(1, -1)),
      run.stdout,
    );
  });
});

Deno.test("e2e: -p's JSON escapes what JSON.stringify leaves raw and a terminal acts on, the values unchanged", async (t) => {
  // C1 controls (U+009B is CSI in 8-bit terminals), a line separator, bidi overrides and isolates.
  const text = "a\u009b31mb\u2028c\u202ed\u2066e\u0085f";
  for (const format of ["json", "stream-json"]) {
    await t.step(format, async () => {
      await using workspace = await createTempWorkspace("mewcode-hostile-json-");
      await using home = await createTempWorkspace("mewcode-hostile-home-");
      await using server = await startFakeAnthropic([turn().text(text).stop("end_turn")]);
      const run = await runMewcode(["-p", "hi", "--output-format", format], {
        cwd: workspace.root,
        env: { ...server.env(), MEWCODE_HOME: home.root, NO_COLOR: "1" },
      });
      equal(run.code, 0, run.stderr);
      assertShown(format, run.stdout);
      ok(!/[\u2028\u2029]/.test(run.stdout), run.stdout);
      const lines = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
      equal(lines.at(-1).result, text, "the parsed answer is the model's text, character for character");
    });
  }
});

Deno.test("e2e: an error quoting a trusted repository's settings shows its text, not obeys it", async () => {
  await using workspace = await createTempWorkspace("mewcode-hostile-usage-");
  await using home = await createTempWorkspace("mewcode-hostile-home-");
  await Deno.mkdir(join(workspace.root, ".mewcode"));
  await Deno.writeTextFile(
    join(workspace.root, ".mewcode", "settings.json"),
    JSON.stringify({ permissions: { additionalDirectories: ["/no-such-\u001b]0;PWNED\u0007-folder"] } }),
  );
  for (
    const args of [["-p", "hi", "--trust"], ["doctor", "--trust"], [
      "tool",
      "Glob",
      '{"pattern":"*"}',
      "--trust",
    ]]
  ) {
    const run = await runMewcode(args, {
      cwd: workspace.root,
      env: { MEWCODE_HOME: home.root, NO_COLOR: "1", ANTHROPIC_API_KEY: "test" },
    });
    // -p and tool stop with a usage error (exit 2); doctor reports the folder among its findings.
    if (args[0] !== "doctor") equal(run.code, 2, `${args[0]}: ${run.stderr}`);
    ok(`${run.stdout}${run.stderr}`.includes("␛]0;PWNED␇"), `${args[0]}: ${run.stdout}${run.stderr}`);
    assertShown(`${args[0]} (stdout)`, run.stdout);
    assertShown(`${args[0]} (stderr)`, run.stderr);
  }
});

/**
 * End to end: the README's first command, as written, on a clean machine (Node.js and npm, no Deno, an empty
 * HOME and npm cache) with a copy of the checkout at /path/to/mewcode's place. Without an API key it must end
 * with one line saying where to get a key and how to set it; with one it runs mewcode's main job, a prompt
 * on the current directory, against the fake Anthropic server.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { CleanMachine, copyPackage, explain } from "./_clean_machine.ts";
import { exists } from "../_fakes/exists.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const PLACEHOLDER = "/path/to/mewcode";

/** The first ```sh block of the README. */
async function firstCommand(): Promise<string> {
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1]?.trim();
  ok(block !== undefined, "the README has a sh block");
  return block;
}

Deno.test("README's first command sets mewcode up on a fresh machine and runs -p on the current directory", async (t) => {
  const command = await firstCommand();
  ok(command.includes(PLACEHOLDER), command);
  match(command, / -p /);
  await using machine = await CleanMachine.create();
  const checkout = join(machine.root, "mewcode");
  await copyPackage(ROOT, checkout);
  const script = command.replaceAll(PLACEHOLDER, checkout);
  await Deno.writeTextFile(join(machine.workspace, "README.md"), "# A project\n\nIt greets people.\n");

  await t.step(
    "without ANTHROPIC_API_KEY: exit 41 and one line on where to get a key and how to set it",
    async () => {
      const started = performance.now();
      const run = await machine.run("sh", ["-c", script]);
      console.log(`    first command, cold: ${Math.round(performance.now() - started)} ms`);
      equal(run.code, 41, explain(run));
      // npm may warn on stderr before mewcode runs; mewcode itself says one line.
      const mewcodeOnly = await machine.run("sh", ["-c", script.slice(script.indexOf("&&") + 2)]);
      equal(mewcodeOnly.code, 41, explain(mewcodeOnly));
      match(
        mewcodeOnly.stderr,
        /^mewcode: [^\n]*ANTHROPIC_API_KEY is not set: create one at https:\/\/console\.anthropic\.com\/settings\/keys and export ANTHROPIC_API_KEY=<your key>[^\n]*; mewcode doctor checks the rest\n$/,
      );
      ok(run.stderr.endsWith(mewcodeOnly.stderr), run.stderr);
    },
  );

  await t.step("npm install built the bundle, which the launcher runs", async () => {
    ok(await exists(join(checkout, "bundle", "main.js")), "bundle/main.js");
    const printed = await machine.run(join(checkout, "scripts", "mewcode"), ["--version"], {
      env: { MEWCODE_PRINT_COMMAND: "1" },
    });
    ok(printed.stdout.split("\n").includes(join(checkout, "bundle", "main.js")), explain(printed));
  });

  await t.step("with a key: the answer to the README's prompt about the current directory", async () => {
    await using server = await startFakeAnthropic([
      turn().text("A project that greets people.").stop("end_turn"),
    ]);
    const run = await machine.run("sh", ["-c", script], { env: server.env() });
    equal(run.code, 0, explain(run));
    ok(run.stdout.endsWith("A project that greets people.\n"), run.stdout);
    const body = JSON.stringify(server.requests[0]?.body);
    const prompt = /-p "([^"]+)"/.exec(command)?.[1] ?? "";
    ok(prompt !== "" && body.includes(prompt), `the prompt "${prompt}" was sent`);
    ok(body.includes(machine.workspace), "the workspace is the current directory");
  });
});

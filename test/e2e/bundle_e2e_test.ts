/**
 * End to end: the bundle (scripts/bundle.ts) built into a copy of the package, run through that copy's
 * launcher: which program the launcher picks, a session whose every tool runs in its worker from the bundle
 * with the same confinement as from the sources, and what a bundled run loads.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { parse } from "acorn";
import { join } from "node:path";
import { installedPackage } from "../../scripts/bench/_package.ts";
import { type FakeAnthropic, httpError, startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { explainRun, runProgram } from "../_fakes/run_cli.ts";

Deno.test("the bundle: the launcher picks it while it is fresh, and a session runs every tool from it, confined as from the sources", async (t) => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-bundle-e2e-" }));
  try {
    const pkg = join(dir, "package");
    const workspace = join(dir, "workspace");
    const home = join(dir, "home");
    await Deno.mkdir(workspace);
    await Deno.mkdir(home);
    // The files the npm package ships, with the bundle built into them (what npm pack and install give).
    const launcher = await installedPackage(pkg, { bundle: true });
    const printed = async () =>
      (await runProgram(launcher, ["--version"], { cwd: workspace, env: { MEWCODE_PRINT_COMMAND: "1" } }))
        .stdout
        .split("\n");

    await t.step("an installed package runs its bundle, without the import map or lock file", async () => {
      const command = await printed();
      ok(command.includes(join(pkg, "bundle", "main.js")), command.join(" "));
      ok(command.includes("--no-config"), command.join(" "));
      ok(!command.some((word) => word.endsWith("main.ts")), command.join(" "));
    });

    await t.step("a git checkout runs the sources once one of them is newer than the bundle", async () => {
      await Deno.mkdir(join(pkg, ".git"));
      ok((await printed()).includes(join(pkg, "bundle", "main.js")), "nothing newer: the bundle");
      const later = new Date(Date.now() + 5_000);
      await Deno.utime(join(pkg, "src", "common", "bytes.ts"), later, later);
      const command = await printed();
      ok(command.includes(join(pkg, "main.ts")), command.join(" "));
      ok(command.includes("--config"), command.join(" "));
      ok(!command.some((word) => word.includes("/bundle/")), command.join(" "));
      await Deno.remove(join(pkg, ".git"));
      ok((await printed()).includes(join(pkg, "bundle", "main.js")), "no .git: the bundle");
    });

    const outside = join(dir, "outside.txt");
    await Deno.writeTextFile(outside, "secret outside the workspace\n");
    await Deno.writeTextFile(join(workspace, "notes.txt"), "alpha\nbeta needle\n");
    await Deno.mkdir(join(workspace, "src"));
    await Deno.writeTextFile(join(workspace, "src", "app.ts"), "export const needle = 1;\n");
    await Deno.symlink(outside, join(workspace, "link.txt"));
    const git = await runProgram("git", ["init", "-q"], { cwd: workspace });
    equal(git.code, 0, explainRun(git));

    await t.step(
      "a session runs ReadFile, Glob, Grep, WriteFile, EditFile and Bash from the bundle",
      async () => {
        await using server = await startFakeAnthropic([
          turn()
            .toolUse("ReadFile", { path: join(workspace, "notes.txt") }, { id: "toolu_read" })
            .toolUse("Glob", { pattern: "**/*.ts" }, { id: "toolu_glob" })
            .toolUse("Grep", { pattern: "needle", output_mode: "files_with_matches" }, { id: "toolu_grep" })
            .stop("tool_use"),
          turn()
            .toolUse("WriteFile", { path: join(workspace, "made.txt"), content: "one\ntwo\n" }, {
              id: "toolu_write",
            })
            .stop("tool_use"),
          turn()
            .toolUse("EditFile", {
              path: join(workspace, "made.txt"),
              old_string: "two",
              new_string: "three",
            }, {
              id: "toolu_edit",
            })
            .toolUse("Bash", { command: "cat made.txt > copied.txt && cat /proc/1/cmdline | tr '\\0' ' '" }, {
              id: "toolu_bash",
            })
            .stop("tool_use"),
          turn().text("Done.").stop("end_turn"),
        ]);
        const result = await runProgram(launcher, [
          "-p",
          "Do the task",
          "--permission-mode",
          "acceptEdits",
          "--allowedTools",
          "Bash",
        ], {
          cwd: workspace,
          env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
        });
        equal(result.code, 0, explainRun(result));
        equal(result.stdout, "Done.\n");
        const results = toolResults(server);
        equal(results.toolu_read?.is_error, false);
        match(results.toolu_read!.text, /beta needle/);
        match(results.toolu_glob!.text, /src\/app\.ts/);
        match(results.toolu_grep!.text, /notes\.txt/);
        match(results.toolu_grep!.text, /src\/app\.ts/);
        equal(results.toolu_write?.is_error, false, results.toolu_write?.text);
        equal(results.toolu_edit?.is_error, false, results.toolu_edit?.text);
        equal(results.toolu_bash?.is_error, false, results.toolu_bash?.text);
        // Process 1 of the command's world is bubblewrap's, not the machine's init.
        match(results.toolu_bash!.text, /bwrap|sandbox|sh /);
        equal(await Deno.readTextFile(join(workspace, "made.txt")), "one\nthree\n");
        equal(await Deno.readTextFile(join(workspace, "copied.txt")), "one\nthree\n");
      },
    );

    await t.step(
      "each tool worker started from the bundle is refused what its profile does not grant",
      async () => {
        const doctor = await runProgram(launcher, ["doctor"], {
          cwd: workspace,
          env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
        });
        for (const profile of ["read-only", "writer", "shell"]) {
          match(
            doctor.stdout,
            new RegExp(`  ${profile}: ok: .*reading /etc/hostname is refused by Deno`),
            explainRun(doctor),
          );
        }
        ok(!doctor.stdout.includes("FAILED: read"), explainRun(doctor));
        match(
          doctor.stdout,
          new RegExp(
            `^Program: ${pkg}/bundle/main\\.js \\(the bundle of the sources as they were at \\d{4}-`,
            "m",
          ),
        );
      },
    );

    await t.step(
      "a bundled run loads bundle files only, and not the interactive session's or OpenAI's code",
      async () => {
        await using server = await startFakeAnthropic([turn().text("Hi.").stop("end_turn")]);
        const command = await printed();
        const deno = command[0]!;
        // The command ends with the --version it was printed for (then an empty line): -p replaces it.
        const args = command.slice(1, command.lastIndexOf("--version")).filter((word) => word !== "--quiet");
        const result = await runProgram(deno, [
          args[0]!,
          "--log-level=debug",
          ...args.slice(1),
          "-p",
          "hello",
        ], {
          cwd: workspace,
          env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
        });
        equal(result.code, 0, explainRun(result));
        const loaded = [...result.stderr.matchAll(/ES module: (\S+?),? \[/g)].map((found) => found[1]!)
          .filter((url) => url.startsWith("file:"));
        ok(loaded.length > 0, "the debug log names the modules loaded");
        deepStrictEqual(loaded.filter((url) => !url.startsWith(`file://${pkg}/bundle/`)), []);
        deepStrictEqual(loaded.filter((url) => /\/(interactive_session|openai_provider)-/.test(url)), []);
        // On its way to the first request the run loads each step's entry and its group, no chunk of its
        // own (scripts/bundle_groups.ts). The one-shot mode loads while the workspace is found (main.ts): the
        // two steps' files may come in either order, and a group two steps import is named for each.
        const names = loaded.map((url) => url.slice(url.lastIndexOf("/") + 1));
        const lastGroup = names.indexOf("group-anthropic_provider.js");
        ok(lastGroup > 0, names.join(" "));
        deepStrictEqual(
          [...new Set(names.slice(0, lastGroup + 1).map((name) => name.replace(/-[A-Z0-9]+\.js$/, "-*.js")))]
            .sort(),
          [
            "anthropic_provider-*.js",
            "group-anthropic_provider.js",
            "group-main.js",
            "group-print_mode.js",
            "group-workspace.js",
            "main.js",
            "print_mode-*.js",
            "workspace-*.js",
          ],
        );
      },
    );

    await t.step("an API error keeps its class's name, which the minified bundle does not keep", async () => {
      await using server = await startFakeAnthropic([
        httpError(401, "authentication_error", "invalid x-api-key"),
      ]);
      const result = await runProgram(launcher, ["-p", "hello", "--output-format", "stream-json"], {
        cwd: workspace,
        env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
      });
      equal(result.code, 41, explainRun(result));
      const events = result.stdout.trim().split("\n").map((line) =>
        JSON.parse(line) as Record<string, unknown>
      );
      deepStrictEqual(
        events.filter((event) => event.type === "error").map((event) => [event.name, event.category]),
        [["AuthenticationError", "authentication"]],
      );
    });

    await t.step(
      "the load path's top-level functions are written to be compiled with their files",
      async () => {
        // scripts/bundle_eager.ts: none is left a declaration there (V8 would compile it on its first call);
        // every other file keeps its own.
        const declarations = async (name: string) => {
          const program = parse(await Deno.readTextFile(join(pkg, "bundle", name)), {
            ecmaVersion: "latest",
            sourceType: "module",
          });
          return program.body.filter((node) => node.type === "FunctionDeclaration").length;
        };
        const files: string[] = [];
        for await (const entry of Deno.readDir(join(pkg, "bundle"))) {
          if (entry.name.endsWith(".js")) files.push(entry.name);
        }
        const loadPath = files.filter((name) =>
          name === "main.js" || name.startsWith("group-") ||
          /^(workspace|print_mode|anthropic_provider)-[A-Z0-9]+\.js$/.test(name)
        ).sort();
        equal(loadPath.length, 8, loadPath.join(" "));
        for (const name of loadPath) {
          equal(await declarations(name), 0, name);
          match(
            await Deno.readTextFile(join(pkg, "bundle", name)),
            /^var [\w$]+=\((?:async )?function/,
            name,
          );
        }
        let elsewhere = 0;
        for (const name of files.filter((name) => !loadPath.includes(name))) {
          elsewhere += await declarations(name);
        }
        ok(elsewhere > 100, `${elsewhere} function declarations in the other files`);
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Each tool_result the server received, by tool_use id: its text and error flag. */
function toolResults(server: FakeAnthropic): Record<string, { text: string; is_error: boolean }> {
  const found: Record<string, { text: string; is_error: boolean }> = {};
  for (const request of server.requests) {
    const messages = (request.body as { messages?: { content: unknown }[] }).messages ?? [];
    for (const message of messages) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as Record<string, unknown>[]) {
        if (block.type !== "tool_result") continue;
        const content = block.content;
        const text = typeof content === "string"
          ? content
          : Array.isArray(content)
          ? content.map((part: { text?: string }) => part.text ?? "").join("")
          : "";
        found[block.tool_use_id as string] = { text, is_error: block.is_error === true };
      }
    }
  }
  return found;
}

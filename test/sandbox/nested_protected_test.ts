/**
 * Protected paths that apply at any depth (`.vscode`: a subfolder opened on its own in the editor runs its
 * tasks; `.claude`: an agent started in a subfolder runs its hooks), in the shell sandbox: one found when the session starts is read-only to commands, and one a command
 * makes in a subfolder, which no mount could cover before it existed, is set aside at the session's end.
 */
import { deepStrictEqual, equal, notEqual, ok } from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exists, exitCodeOf, openSandbox, outputOf, runIn } from "./_sandbox.ts";
import { GitWatch } from "../../src/sandbox/git_watch.ts";
import { userGitConfig } from "../../src/sandbox/git_metadata.ts";
import { recordUnfinished } from "../../src/sandbox/_unfinished_set_aside.ts";

const TASK = '{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch /tmp/pwned",' +
  '"runOptions":{"runOn":"folderOpen"}}]}';

Deno.test("A nested .vscode found when the session starts is read-only to commands, and its folder stays in place", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.mkdir(join(workspace.root, "web/.vscode"), { recursive: true });
  await Deno.writeTextFile(join(workspace.root, "web/.vscode/settings.json"), "{}\n");
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  for (
    const command of [
      `echo '${TASK}' > web/.vscode/tasks.json`,
      "echo '{\"x\": 1}' > web/.vscode/settings.json",
      "rm -rf web/.vscode",
      // Renamed away, the folder would leave room for a new web/.vscode.
      "mv web web-moved",
      "mv web/.vscode web/old",
    ]
  ) {
    const { result } = await runIn(sandbox, command);
    notEqual(exitCodeOf(result), 0, `${command}: ${result.content}`);
  }
  deepStrictEqual(
    [...Deno.readDirSync(join(workspace.root, "web/.vscode"))].map((entry) => entry.name),
    ["settings.json"],
  );
  equal(await Deno.readTextFile(join(workspace.root, "web/.vscode/settings.json")), "{}\n");
  equal(await exists(join(workspace.root, "web-moved")), false);
  const { result } = await runIn(sandbox, "echo 'export {}' > web/main.ts && echo ok");
  equal(outputOf(result), "ok", "the rest of the subfolder stays writable");
  deepStrictEqual(await sandbox.endOfSession(), []);
});

Deno.test("A .vscode a command makes in a subfolder is set aside at the session's end, a symlink as itself", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  await Deno.mkdir(join(workspace.root, "api"));
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { setAsideIn });
  const { result } = await runIn(
    sandbox,
    `mkdir -p api/.vscode deep/a/b tasks && echo '${TASK}' > api/.vscode/tasks.json && ` +
      `echo '${TASK}' > tasks/tasks.json && ln -s ../../../tasks deep/a/b/.VSCode && echo ok`,
  );
  equal(outputOf(result), "ok");
  // The workspace's own .vscode is a placeholder during the call: no command made it.
  const { result: top } = await runIn(sandbox, "mkdir .vscode/x; echo $?");
  notEqual(outputOf(top), "0");

  const lines = await sandbox.endOfSession();
  equal(lines.length, 2, lines.join("\n"));
  ok(
    lines[0]!.startsWith(
      `"${
        join(workspace.root, "api/.vscode")
      }" (a directory) appeared during the session and was moved to "${setAsideIn}/`,
    ),
    lines[0],
  );
  ok(lines[0]!.includes("look at what it holds before you put it back"), lines[0]);
  ok(lines[1]!.startsWith(`"${join(workspace.root, "deep/a/b/.VSCode")}" (a symlink) appeared`), lines[1]);
  equal(await exists(join(workspace.root, "api/.vscode")), false);
  equal(await exists(join(workspace.root, "deep/a/b/.VSCode")), false);
  // Moved whole, the symlink as itself: what it led to stays where it is.
  const moved = /was moved to "([^"]+)"/.exec(lines[0]!)![1]!;
  equal(await Deno.readTextFile(join(moved, "tasks.json")), `${TASK}\n`);
  equal(await Deno.readTextFile(join(workspace.root, "tasks/tasks.json")), `${TASK}\n`);
  ok(await exists(join(workspace.root, "api")), "the subfolder itself stays");
});

Deno.test("A folder named mise is not protected: only the files mise reads from it are", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  const root = workspace.root;
  await Deno.mkdir(join(root, "cmd/mise"), { recursive: true });
  await Deno.writeTextFile(join(root, "cmd/mise/main.go"), "package main\n");
  await using sandbox = await openSandbox(root, "workspace-write", { setAsideIn });
  const { result } = await runIn(
    sandbox,
    "echo 'package main // changed' > cmd/mise/main.go && mkdir -p mise/tasks && echo x > mise/notes.md && " +
      "printf '#!/bin/sh\\n' > mise/tasks/build && mv cmd/mise cmd/mise2 && mv cmd/mise2 cmd/mise && echo ok",
  );
  equal(outputOf(result), "ok", result.content);
  deepStrictEqual(await sandbox.endOfSession(), []);
  for (const path of ["cmd/mise/main.go", "mise/notes.md", "mise/tasks/build"]) {
    ok(await exists(join(root, path)), `${path} stays`);
  }
});

Deno.test("A walk that stops short says a .vscode made beyond where it stopped was not looked for", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  // What a command can do to the session's last walk: more entries than it reads, before what it made.
  for (let index = 0; index < 10; index++) await Deno.writeTextFile(join(root, `a${index}`), "");
  const user = userGitConfig({ HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" });
  const watch = await GitWatch.start([root], user, [".vscode"], { maxEntries: 5 });
  await Deno.mkdir(join(root, "zz/.vscode"), { recursive: true });
  const { lines, madeNamed } = await watch.end(root);
  deepStrictEqual(madeNamed, []);
  deepStrictEqual(lines, [
    "The git metadata scan stopped after 5 entries: folders beyond them were not checked for planted " +
    "repositories",
    "Nor for .vscode made in a subfolder beyond them (settings an editor, a coding agent, a dev container, " +
    "direnv or mise runs commands from when that folder is opened): look for them before you open a subfolder " +
    "(find . -name .vscode)",
  ]);
});

// Each name a tool reads from the folder it is opened or started in, with what a command would plant there.
// `entry` is what is set aside (a name, or names in a row): the first name of `path` unless given.
const NESTED: readonly { path: string; content: string; runs: string; entry?: string }[] = [
  { path: ".idea/workspace.xml", content: "<project/>", runs: "editor settings run commands" },
  { path: ".claude/settings.json", content: '{"hooks":{}}', runs: "another coding agent runs the hooks" },
  { path: ".gemini/settings.json", content: "{}", runs: "another coding agent runs the hooks" },
  { path: ".codex/config.toml", content: "", runs: "another coding agent runs the hooks" },
  { path: ".cursor/mcp.json", content: "{}", runs: "another coding agent runs the hooks" },
  { path: ".mcp.json", content: '{"mcpServers":{}}', runs: "another coding agent runs the hooks" },
  {
    path: ".devcontainer/devcontainer.json",
    content: '{"initializeCommand":"touch /tmp/pwned"}',
    runs: "a dev container's initializeCommand",
  },
  { path: ".devcontainer.json", content: "{}", runs: "a dev container's initializeCommand" },
  { path: ".envrc", content: "source_env_if_exists .envrc.local", runs: "direnv runs it in your shell" },
  { path: ".envrc.local", content: "PATH_add bin", runs: "direnv runs it in your shell" },
  ...[
    [".opencode/plugins/p.ts", "export const P = async () => ({})"],
    ["opencode.json", '{"mcp":{}}'],
    ["opencode.jsonc", "{}"],
    [".aider.conf.yml", "lint-cmd: touch /tmp/pwned"],
    [".windsurf/hooks.json", "{}"],
    [".continue/mcpServers/x.yaml", "command: touch"],
    [".kiro/hooks/x.kiro.hook", "{}"],
    ["crush.json", '{"mcp":{"x":{"type":"stdio","command":"touch"}}}'],
    [".crush.json", '{"lsp":{"x":{"command":"touch"}}}'],
    ["crushrc", "mcp add x --type stdio --command touch"],
    [".crushrc", "lsp add x --command touch"],
    [".continuerc.json", '{"experimental":{"modelContextProtocolServers":[]}}'],
  ].map(([path, content]) => ({
    path: path!,
    content: content!,
    runs: "another coding agent runs the plugins",
  })),
  ...[[".zed/settings.json", "{}"], [".helix/languages.toml", "[language-server.x]"]].map((
    [path, content],
  ) => ({
    path: path!,
    content: content!,
    runs: "an editor starts the language servers",
  })),
  ...[
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".mise/config.toml",
    "mise.production.toml",
    ".mise.staging.local.toml",
    ".rtx.toml",
    ".rtx.local.toml",
  ].map((path) => ({ path, content: '[hooks]\nenter = "touch /tmp/pwned"', runs: "mise runs its hooks" })),
  // mise reads these files of a folder named mise, and every .toml of .config/mise/conf.d.
  ...[
    ["mise/config.toml", "mise/config.toml"],
    ["mise/config.ci.local.toml", "mise/config.ci.local.toml"],
    [".config/mise/conf.d/x.toml", ".config/mise/conf.d"],
  ].map(([path, entry]) => ({
    path: path!,
    entry: entry!,
    content: '[hooks]\nenter = "touch /tmp/pwned"',
    runs: "mise runs its hooks",
  })),
];

Deno.test("Agent, editor, dev container, direnv and mise settings a command makes in a subfolder are set aside at the session's end", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  await Deno.mkdir(join(workspace.root, "api"));
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { setAsideIn });
  const command = NESTED.map(({ path, content }) =>
    `mkdir -p "$(dirname api/${path})" && printf '%s' '${content}' > api/${path}`
  ).join(" && ");
  const { result } = await runIn(sandbox, `${command} && echo ok`);
  equal(outputOf(result), "ok", result.content);

  const lines = await sandbox.endOfSession();
  for (const { path, runs, entry } of NESTED) {
    const made = join(workspace.root, "api", entry ?? path.split("/")[0]!);
    const line = lines.find((text) => text.startsWith(`"${made}" (a `));
    ok(line !== undefined, `${made} is reported: ${lines.join("\n")}`);
    ok(line.includes(runs), line);
    equal(await exists(made), false, `${made} was set aside`);
  }
  equal(lines.length, NESTED.length, lines.join("\n"));
  ok(await exists(join(workspace.root, "api")), "the subfolder itself stays");
  for (const folder of ["api/mise", "api/.config/mise"]) {
    ok(
      await exists(join(workspace.root, folder)),
      `${folder} stays: only the files mise reads are set aside`,
    );
  }
});

Deno.test("Agent, editor, dev container, direnv and mise settings found in a subfolder when the session starts are read-only to commands", async () => {
  await using workspace = await createTempWorkspace();
  for (const { path, content } of NESTED) {
    await Deno.mkdir(join(workspace.root, "web", dirname(path)), { recursive: true });
    await Deno.writeTextFile(join(workspace.root, "web", path), content);
  }
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  for (const { path, content, entry } of NESTED) {
    const top = entry ?? path.split("/")[0]!;
    for (const command of [`echo changed > web/${path}`, `rm -rf web/${top}`, `mv web/${top} web/old`]) {
      const { result } = await runIn(sandbox, command);
      notEqual(exitCodeOf(result), 0, `${command}: ${result.content}`);
    }
    equal(await Deno.readTextFile(join(workspace.root, "web", path)), content);
  }
  const { result } = await runIn(sandbox, "echo 'export {}' > web/main.ts && echo ok");
  equal(outputOf(result), "ok", "the rest of the subfolder stays writable");
  deepStrictEqual(await sandbox.endOfSession(), []);
});

Deno.test("VS Code workspace files are read-only to commands where they are, and one a command makes is set aside, at the top too", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  const content = '{"folders":[{"path":"."}]}\n';
  await Deno.mkdir(join(workspace.root, "web"));
  await Deno.writeTextFile(join(workspace.root, "app.code-workspace"), content);
  await Deno.writeTextFile(join(workspace.root, "web/Web.Code-Workspace"), content);
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { setAsideIn });
  for (const path of ["app.code-workspace", "web/Web.Code-Workspace"]) {
    for (const command of [`echo '${TASK}' > ${path}`, `rm -f ${path}`, `mv ${path} ${path}.old`]) {
      const { result } = await runIn(sandbox, command);
      notEqual(exitCodeOf(result), 0, `${command}: ${result.content}`);
    }
    equal(await Deno.readTextFile(join(workspace.root, path)), content);
  }
  const { result } = await runIn(
    sandbox,
    `mkdir -p api && echo '${TASK}' > new.code-workspace && echo '${TASK}' > api/api.code-workspace && ` +
      "echo '{}' > notes.code-workspace.md && echo ok",
  );
  equal(outputOf(result), "ok", result.content);

  const lines = await sandbox.endOfSession();
  equal(lines.length, 2, lines.join("\n"));
  for (const [path, where] of [["new.code-workspace", ""], ["api/api.code-workspace", " in a subfolder"]]) {
    const line = lines.find((text) => text.startsWith(`"${join(workspace.root, path!)}" (a file) appeared`));
    ok(line !== undefined, `${path} is reported: ${lines.join("\n")}`);
    ok(line.includes(`: it is a protected path${where} (VS Code runs the tasks of a workspace file`), line);
    equal(await exists(join(workspace.root, path!)), false, `${path} was set aside`);
  }
  ok(await exists(join(workspace.root, "notes.code-workspace.md")), "another name stays");
});

Deno.test("A walk that stops short names a workspace file pattern so that find can look for it", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  for (let index = 0; index < 10; index++) await Deno.writeTextFile(join(root, `a${index}`), "");
  const user = userGitConfig({ HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" });
  const watch = await GitWatch.start([root], user, [".vscode", "*.code-workspace"], { maxEntries: 5 });
  const { lines } = await watch.end(root);
  ok(lines[1]?.endsWith("(find . -name .vscode -o -name '*.code-workspace')"), lines.join("\n"));
});

Deno.test("direnv's .envrc and .envrc.local are read-only to commands at the top, and one a command makes there is set aside", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  const envrc = "source_env_if_exists .envrc.local\n";
  await Deno.writeTextFile(join(workspace.root, ".envrc"), envrc);
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { setAsideIn });
  for (const command of ["echo 'PATH_add bin' >> .envrc", "rm -f .envrc", "mv .envrc .envrc.old"]) {
    const { result } = await runIn(sandbox, command);
    notEqual(exitCodeOf(result), 0, `${command}: ${result.content}`);
  }
  const { result } = await runIn(sandbox, "echo 'touch /tmp/pwned' > .envrc.local && echo ok");
  equal(outputOf(result), "ok", result.content);

  const lines = await sandbox.endOfSession();
  equal(lines.length, 1, lines.join("\n"));
  ok(lines[0]!.startsWith(`"${join(workspace.root, ".envrc.local")}" (a file) appeared`), lines[0]);
  ok(lines[0]!.includes(": it is a protected path (direnv runs it in your shell"), lines[0]);
  equal(await exists(join(workspace.root, ".envrc.local")), false);
  equal(await Deno.readTextFile(join(workspace.root, ".envrc")), envrc);
});

Deno.test("Settings a package ships in node_modules stay removable, and one made there is not set aside", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  const root = workspace.root;
  await Deno.mkdir(join(root, "node_modules/pkg/.idea"), { recursive: true });
  await Deno.writeTextFile(join(root, "node_modules/pkg/.idea/workspace.xml"), "<project/>\n");
  await Deno.mkdir(join(root, "node_modules/pkg/.vscode"));
  await Deno.mkdir(join(root, "packages/api"), { recursive: true });
  await using sandbox = await openSandbox(root, "workspace-write", { setAsideIn });
  const { result } = await runIn(
    sandbox,
    "rm -rf node_modules && mkdir -p node_modules/other/.claude packages/api/.claude && echo ok",
  );
  equal(outputOf(result), "ok", result.content);
  const lines = await sandbox.endOfSession();
  equal(lines.length, 1, lines.join("\n"));
  ok(lines[0]!.startsWith(`"${join(root, "packages/api/.claude")}" (a directory) appeared`), lines[0]);
  ok(await exists(join(root, "node_modules/other/.claude")), "a package's own folder stays");
});

Deno.test("mise's config files are read-only to commands at the top, and those a command makes under .config or for a MISE_ENV are set aside", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  const root = workspace.root;
  const config = '[tools]\nnode = "22"\n';
  await Deno.writeTextFile(join(root, "mise.toml"), config);
  await Deno.mkdir(join(root, "api"));
  await using sandbox = await openSandbox(root, "workspace-write", { setAsideIn });
  // mise trusts a file by its path: a hook added to a trusted mise.toml runs at the user's next cd.
  for (
    const command of [
      `printf '[hooks]\\nenter = "touch /tmp/pwned"\\n' >> mise.toml`,
      "rm -f mise.toml",
      "mv mise.toml old.toml",
    ]
  ) {
    const { result } = await runIn(sandbox, command);
    notEqual(exitCodeOf(result), 0, `${command}: ${result.content}`);
  }
  equal(await Deno.readTextFile(join(root, "mise.toml")), config);
  const hook = `'[hooks]\\nenter = "touch /tmp/pwned"\\n'`;
  const { result } = await runIn(
    sandbox,
    `mkdir -p api/.config/mise/conf.d mise-tasks && printf ${hook} > api/.config/mise.toml && ` +
      `printf ${hook} > api/.config/mise/conf.d/x.toml && printf ${hook} > mise.ci.toml && ` +
      "echo 'node 22' > .tool-versions && printf '#!/bin/sh\\n' > mise-tasks/build && " +
      "echo '{}' > mise.toml.example && echo ok",
  );
  equal(outputOf(result), "ok", result.content);

  const lines = await sandbox.endOfSession();
  const madePaths = ["api/.config/mise.toml", "api/.config/mise/conf.d", "mise.ci.toml"];
  for (const path of madePaths) {
    const line = lines.find((text) => text.startsWith(`"${join(root, path)}" (a `));
    ok(line !== undefined, `${path} is reported: ${lines.join("\n")}`);
    ok(line.includes("(mise runs its hooks and env sources in your shell"), line);
    equal(await exists(join(root, path)), false, `${path} was set aside`);
  }
  equal(lines.length, madePaths.length, lines.join("\n"));
  for (const path of [".tool-versions", "mise-tasks/build", "mise.toml.example", "api/.config/mise"]) {
    ok(await exists(join(root, path)), `${path} stays: it runs nothing by itself`);
  }
});

Deno.test("What a session's end found and was cut short before setting aside, the next session sets aside", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const root = workspace.root;
  const setAsideIn = join(state.root, "set-aside");
  // The session's end is cut short as a second Ctrl-C cuts it (Deno.exit), once it has set aside a few of
  // the folders its command made: a model makes thousands to make the end long enough for that.
  const session = `
    import { openSandbox, runIn } from ${JSON.stringify(new URL("./_sandbox.ts", import.meta.url).href)};
    const sandbox = await openSandbox(${JSON.stringify(root)}, "workspace-write", { setAsideIn: ${
    JSON.stringify(setAsideIn)
  } });
    await runIn(sandbox, "for i in $(seq 1 100); do mkdir -p d$i/.vscode; done; mkdir -p zz/.vscode && echo '{}' > zz/.vscode/tasks.json");
    setInterval(() => {
      try {
        const moved = [...Deno.readDirSync(${
    JSON.stringify(setAsideIn)
  })].filter((entry) => entry.isDirectory);
        if (moved.length >= 3) Deno.exit(130);
      } catch {
        // Not made yet.
      }
    }, 1);
    await sandbox.endOfSession();
  `;
  const cut = await new Deno.Command(Deno.execPath(), { args: ["eval", session], stderr: "piped" }).output();
  equal(cut.code, 130, new TextDecoder().decode(cut.stderr));
  const left = [...Deno.readDirSync(root)].filter((entry) => existsSync(join(root, entry.name, ".vscode")));
  // Cut after the first few: how many more went before the exit depends on the load (CI: 11). Over 52 left
  // gives the fifty lines and the count below.
  ok(left.length > 60, `${left.length} left`);
  // Since then the user made one of them again: theirs now. And another session's end is under way.
  const remade = left.find((entry) => entry.name !== "zz")!.name;
  await Deno.mkdir(join(root, remade, "new"));
  await Deno.remove(join(root, remade, ".vscode"));
  await Deno.rename(join(root, remade, "new"), join(root, remade, ".vscode"));
  await Deno.mkdir(join(root, "web/.vscode"), { recursive: true });
  const info = await Deno.lstat(join(root, "web/.vscode"));
  const live = await recordUnfinished(setAsideIn, [{
    path: join(root, "web/.vscode"),
    dev: info.dev,
    ino: info.ino!,
  }]);
  ok(live !== null);

  await using next = await openSandbox(root, "workspace-write", { setAsideIn });
  const lines = await next.endOfSession();
  // Fifty on lines of their own, the rest counted (see the next test).
  equal(lines.length, 51, lines.join("\n"));
  ok(
    lines[0]!.startsWith(
      `"${root}/` + lines[0]!.slice(root.length + 2).split("/")[0] +
        `/.vscode" (a directory) appeared during ` +
        `an earlier session here, which ended before it was set aside, and was moved to "${setAsideIn}/`,
    ),
    lines[0],
  );
  ok(lines[50]!.startsWith(`${left.length - 51} more entries of protected names`), lines[50]);
  deepStrictEqual(
    [...Deno.readDirSync(root)].filter((entry) => existsSync(join(root, entry.name, ".vscode"))).map((
      entry,
    ) => entry.name).sort(),
    [remade, "web"].sort(),
  );
  const records = () =>
    [...Deno.readDirSync(setAsideIn)].filter((entry) => entry.name.startsWith("unfinished-"));
  equal(records().length, 1, "the live session's record stays until its end");
  await live!.done();
  equal(records().length, 0);
});

Deno.test("Past fifty entries set aside at a session's end, the rest are counted on one line, below what matters", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const setAsideIn = join(state.root, "set-aside");
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { setAsideIn });
  // Thousands of folders bury, a screenful per hundred, the warning about the hook planted beside them.
  const { result } = await runIn(
    sandbox,
    "for i in $(seq 1 300); do mkdir -p d$i/.vscode; done; git init -q sub && " +
      "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > sub/.git/hooks/post-checkout && " +
      "chmod +x sub/.git/hooks/post-checkout && echo ok",
  );
  equal(outputOf(result), "ok");
  const lines = await sandbox.endOfSession();
  equal(lines.filter((line) => line.includes("(a directory) appeared during the session")).length, 50);
  ok(lines.some((line) => line.includes("post-checkout is a new hook")), lines.join("\n"));
  ok(lines.at(-1)!.startsWith("250 more entries of protected names"), lines.at(-1));
  ok(lines.at(-1)!.includes(`were moved into "${setAsideIn}"`), lines.at(-1));
  equal(lines.length, 51 + lines.filter((line) => line.includes("sub/")).length, lines.join("\n"));
  for (let index = 1; index <= 300; index++) {
    equal(existsSync(join(workspace.root, `d${index}/.vscode`)), false);
  }
});

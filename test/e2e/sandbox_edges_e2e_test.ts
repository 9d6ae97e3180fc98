/**
 * End to end through the shipped launcher: what a hostile repository or environment could do before the
 * tools even run (helper programs found through PATH, Deno's own overrides, mewcode's API key in /proc),
 * and a workspace named through a symlink.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { readRuntimeFlags } from "../../scripts/compile.ts";
import { parseToolOutput, runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

const SECRET = "sk-ant-e2e-secret-0123456789";
const DENO_DIR = join(new URL("../../scripts/mewcode", import.meta.url).pathname, "..");

Deno.test("A repository's node_modules/.bin helpers are never run, even first on PATH (as under npx)", async () => {
  await using workspace = await createTempWorkspace();
  const markers = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "mewcode-markers-" });
  try {
    const bin = join(workspace.root, "node_modules", ".bin");
    await Deno.mkdir(bin, { recursive: true });
    for (const name of ["bwrap", "bash", "sh", "git", "deno"]) {
      await Deno.writeTextFile(
        join(bin, name),
        `#!/bin/sh\ntouch ${markers}/${name}-ran\necho "planted ${name} 2.9.6"\n`,
      );
      await Deno.chmod(join(bin, name), 0o755);
    }
    const run = await runMewcode(["tool", "Bash", JSON.stringify({ command: "echo from-the-sandbox" })], {
      cwd: workspace.root,
      env: { PATH: `${bin}:node_modules/.bin:${Deno.env.get("PATH")}` },
    });
    const output = parseToolOutput(run);
    equal(output.content, "<output>from-the-sandbox</output>\n<exit_code>0</exit_code>");
    // Inside the sandbox the repository's programs may run (PATH is the user's, the sandbox contains
    // them); outside it, none ran: not as the launcher's shell, nor as Deno, bubblewrap or the shell.
    equal((await Array.fromAsync(Deno.readDir(markers))).map((entry) => entry.name).join(", "), "");
  } finally {
    await Deno.remove(markers, { recursive: true });
  }
});

Deno.test("Commands cannot read mewcode's API key through /proc in any sandbox mode", async (t) => {
  await using workspace = await createTempWorkspace();
  // Every environment visible in /proc (the pattern itself appears only in command lines, not read here).
  const command = 'for p in /proc/[0-9]*; do tr "\\0" "\\n" < "$p/environ"; done 2>/dev/null | ' +
    'grep -c "sk-ant-e2e" || true; echo "parent=$PPID"';
  for (const mode of ["workspace-write", "read-only", "danger-full-access"]) {
    await t.step(mode, async () => {
      const run = await runMewcode(["tool", "Bash", JSON.stringify({ command }), "--sandbox", mode], {
        cwd: workspace.root,
        env: { ANTHROPIC_API_KEY: SECRET },
      });
      const output = parseToolOutput(run);
      equal(output.content.includes(SECRET), false);
      ok(output.content.startsWith("<output>0\nparent="), output.content);
    });
  }
});

Deno.test("The launcher clears Deno's permission overrides, and the runtime refuses to start with one", async () => {
  await using workspace = await createTempWorkspace();
  const overrides = {
    DENO_PERMISSION_BROKER_PATH: join(workspace.root, "no-broker.sock"),
    DENO_AUDIT_PERMISSIONS: join(workspace.root, "audit.log"),
    DENO_TRACE_PERMISSIONS: "1",
    DENO_V8_FLAGS: "--no-enable-experimental-regexp-engine-on-excessive-backtracks",
  };
  const viaLauncher = await runMewcode([
    "tool",
    "ReadFile",
    JSON.stringify({ path: join(workspace.root, "a") }),
  ], {
    cwd: workspace.root,
    env: overrides,
  });
  ok(
    parseToolOutput(viaLauncher).content.includes("file not found"),
    viaLauncher.stdout + viaLauncher.stderr,
  );
  equal(
    await Deno.stat(overrides.DENO_AUDIT_PERMISSIONS).catch(() => null),
    null,
    "no audit log was written",
  );
  // Started without the launcher (as a compiled binary would be), with a broker that allows everything,
  // mewcode refuses to run instead of running with every worker's grant overridden.
  const brokerPath = join(workspace.root, "broker.sock");
  using broker = Deno.listen({ transport: "unix", path: brokerPath });
  const serving = serveAllowAll(broker);
  const direct = await toolsWithoutLauncher(workspace.root, { DENO_PERMISSION_BROKER_PATH: brokerPath });
  const stderr = new TextDecoder().decode(direct.stderr);
  equal(direct.code, 2, stderr);
  ok(stderr.includes("DENO_PERMISSION_BROKER_PATH is set"), stderr);
  broker.close();
  await serving;
});

Deno.test("NODE_OPTIONS cannot preload the workspace's code beside mewcode", async () => {
  await using workspace = await createTempWorkspace();
  // Yarn's Plug'n'Play sets NODE_OPTIONS to the project's loader; a hostile project's loader reads the key.
  const marker = join(workspace.root, "preloaded");
  await Deno.writeTextFile(
    join(workspace.root, ".pnp.cjs"),
    `require("node:fs").writeFileSync(${JSON.stringify(marker)}, process.env.ANTHROPIC_API_KEY ?? "none");\n`,
  );
  const viaLauncher = await runMewcode(["tools"], {
    cwd: workspace.root,
    env: { NODE_OPTIONS: "--require ./.pnp.cjs", ANTHROPIC_API_KEY: SECRET },
  });
  equal(viaLauncher.code, 0, viaLauncher.stderr);
  equal(await Deno.stat(marker).catch(() => null), null, "the launcher kept the loader from running");
  // Started without the launcher (as a compiled binary would be): the session does not go on beside a
  // preload or a debugger; a harmless option is no reason to refuse.
  const direct = (nodeOptions: string) => toolsWithoutLauncher(workspace.root, { NODE_OPTIONS: nodeOptions });
  const refused = await direct("--max-old-space-size=512 -r ./.pnp.cjs");
  const stderr = new TextDecoder().decode(refused.stderr);
  equal(refused.code, 2, stderr);
  ok(stderr.includes("NODE_OPTIONS holds -r"), stderr);
  // Quoted as the runtime's NODE_OPTIONS syntax allows (round 17: the session went on beside the preload).
  for (
    const quoted of [
      '"--require" ./.pnp.cjs',
      '"-r" "./.pnp.cjs"',
      '--max-old-space-size=512 "--import=./x.mjs"',
    ]
  ) {
    const result = await direct(quoted);
    equal(result.code, 2, `${quoted}: ${new TextDecoder().decode(result.stderr)}`);
  }
  const harmless = await direct("--max-old-space-size=512");
  equal(harmless.code, 0, new TextDecoder().decode(harmless.stderr));
});

/** `mewcode tools` started as a compiled binary would be, without the launcher, with the runtime flags. */
async function toolsWithoutLauncher(cwd: string, env: Record<string, string>): Promise<Deno.CommandOutput> {
  const flags = await readRuntimeFlags();
  return await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "--quiet", join(DENO_DIR, "..", "main.ts"), "tools"],
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
}

/** A permission broker (Deno's line-delimited JSON protocol) that allows every request. */
async function serveAllowAll(listener: Deno.Listener): Promise<void> {
  try {
    for await (const connection of listener) {
      void (async () => {
        const encoder = new TextEncoder();
        let buffered = "";
        for await (const chunk of connection.readable.pipeThrough(new TextDecoderStream())) {
          buffered += chunk;
          let newline;
          while ((newline = buffered.indexOf("\n")) !== -1) {
            const request = JSON.parse(buffered.slice(0, newline)) as { id: number };
            buffered = buffered.slice(newline + 1);
            await connection.write(
              encoder.encode(`${JSON.stringify({ id: request.id, result: "allow" })}\n`),
            );
          }
        }
      })().catch(() => {});
    }
  } catch {
    // Closed.
  }
}

Deno.test("A workspace named through a symlink accepts paths through the same link", async () => {
  await using workspace = await createTempWorkspace();
  const link = `${workspace.root}-link`;
  await Deno.symlink(workspace.root, link);
  try {
    await Deno.writeTextFile(join(workspace.root, "a.txt"), "through the link\n");
    const read = await runMewcode([
      "-C",
      link,
      "tool",
      "ReadFile",
      JSON.stringify({ path: `${link}/a.txt` }),
    ]);
    const output = parseToolOutput(read);
    equal(output.is_error, false, output.content);
    ok(output.content.includes("through the link"));
    const outside = await runMewcode(
      [
        "-C",
        link,
        "tool",
        "ReadFile",
        JSON.stringify({ path: `${link}/../${workspace.root.split("/").at(-1)}-other` }),
      ],
    );
    equal(parseToolOutput(outside).is_error, true);
  } finally {
    await Deno.remove(link);
  }
});

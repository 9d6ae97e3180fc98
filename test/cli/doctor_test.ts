import { equal, match, ok } from "node:assert/strict";
import { parseCli } from "../../src/cli/args.ts";
import { programLine, runDoctor } from "../../src/cli/doctor_command.ts";
import { describeTrust, trustWorkspace } from "../../src/config/trust.ts";
import type { HelperPaths } from "../../src/sandbox/helpers.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { startFakeOpenAi } from "../fake_anthropic/openai_server.ts";
import { closedPort } from "../_fakes/closed_port.ts";

/** What runDoctor prints and returns, run in this process with injected helper programs. */
async function doctorWith(
  root: string,
  args: string[],
  helpers: HelperPaths,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  const code = await runDoctor({
    workspace: { root, aliases: [] },
    options: parseCli(["doctor", ...args]),
    helpers,
    env: { ...Deno.env.toObject(), ...env },
    print: (text) => (stdout += text),
  });
  return { code, stdout };
}

const WITHOUT_BUBBLEWRAP: HelperPaths = {
  bwrap: null,
  bash: "/usr/bin/bash",
  sh: "/usr/bin/sh",
  git: null,
  rg: null,
  cat: null,
};

Deno.test("mewcode doctor reports Deno, the workspace, the sandbox and enforced worker permissions, and exits 0", async () => {
  await using workspace = await createTempWorkspace();
  const run = await runMewcode(["doctor"], { cwd: workspace.root });
  equal(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, new RegExp(`^Deno: ${Deno.version.deno.replaceAll(".", "\\.")} `, "m"));
  // The launcher runs main.ts, or the bundle when this checkout has built one (test/e2e/bundle_e2e_test.ts).
  match(run.stdout, /^Program: \/\S+\/(main\.ts|bundle\/main\.js \(the bundle .*)$/m);
  match(run.stdout, new RegExp(`^Workspace: ${workspace.root}$`, "m"));
  match(run.stdout, /^ {2}trust: no repository settings files here: nothing needs trust$/m);
  match(run.stdout, /backend: bubblewrap/);
  match(run.stdout, /preflight: ok/);
  for (const kind of ["read-only", "writer", "shell"]) {
    match(
      run.stdout,
      new RegExp(`^  ${kind}: ok: .*reading /etc/hostname is refused by Deno \\(NotCapable\\)$`, "m"),
    );
  }
  match(run.stdout, /^ {2}read-only: ok: reading the workspace is allowed$/m);
  // The shell's worker starts the sandbox it keeps across calls through sh, which becomes bubblewrap.
  match(run.stdout, /^ {2}shell: ok: spawning "\/\S*\/sh" is allowed$/m);
  match(run.stdout, /^ {2}calls: one sandbox kept across calls \(started by \/\S*\/sh\)/m);
  match(run.stdout, /^ {2}searches: Grep's ripgrep runs read-only in one sandbox kept across searches/m);
  match(run.stdout, /^ {4}bwrap: \/usr\/bin\/bwrap$/m);
  match(run.stdout, /seccomp: socket\(AF_UNIX\) fails with EPERM/);
  match(run.stdout, /home: every home folder is an empty tmpfs/);
  match(run.stdout, /^ {4}processes: /m);
  // The kernel does not apply RLIMIT_NPROC to root: run as root, doctor must not claim it.
  if (Deno.uid() === 0) match(run.stdout, /^ {4}processes: (?!RLIMIT_NPROC)/m);
  match(run.stdout, /^ {4}memory: /m);
  match(run.stdout, /^Everything (works\.|else works: set ANTHROPIC_API_KEY to run a prompt\.)$/m);
});

Deno.test("mewcode doctor says whether the repository's settings wait for trust, and that they apply once trusted", async () => {
  await using workspace = await createTempWorkspace();
  const home = await Deno.makeTempDir({ prefix: "mewcode-doctor-home-" });
  try {
    await Deno.mkdir(`${workspace.root}/.mewcode`);
    await Deno.writeTextFile(
      `${workspace.root}/.mewcode/settings.json`,
      JSON.stringify({ permissions: { allow: ["Bash(npm test)"] } }),
    );
    const env = { MEWCODE_HOME: home };
    const before = await doctorWith(workspace.root, [], WITHOUT_BUBBLEWRAP, env);
    match(
      before.stdout,
      /^ {2}trust: not trusted: the repository's settings may only tighten \(.*settings\.json\); 1 setting\(s\) that loosen permissions wait for trust \(review them with `mewcode trust`\)$/m,
    );
    const description = await describeTrust({ home, root: workspace.root });
    equal(
      (await trustWorkspace({ home, root: workspace.root, fingerprint: description.fingerprint })).ok,
      true,
    );
    const after = await doctorWith(workspace.root, [], WITHOUT_BUBBLEWRAP, env);
    match(after.stdout, /^ {2}trust: trusted: the repository's settings apply \(.*settings\.json\)$/m);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mewcode doctor --sandbox danger-full-access checks that the shell's worker may spawn the shell", async () => {
  await using workspace = await createTempWorkspace();
  const run = await runMewcode(["doctor", "--sandbox", "danger-full-access"], { cwd: workspace.root });
  equal(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, /backend: bubblewrap \(\/usr\/bin\/bwrap\), PID namespace only/);
  match(run.stdout, /note: danger-full-access: commands can read and write everything your user can/);
  match(run.stdout, /^ {2}shell: ok: spawning "\/usr\/bin\/bwrap" is allowed$/m);
  match(run.stdout, /^Everything (works\.|else works: set ANTHROPIC_API_KEY to run a prompt\.)$/m);
});

Deno.test("mewcode doctor exits 1 and says how to install bubblewrap when it is missing", async () => {
  await using workspace = await createTempWorkspace();
  const run = await doctorWith(workspace.root, [], WITHOUT_BUBBLEWRAP);
  equal(run.code, 1, run.stdout);
  match(run.stdout, /preflight: FAILED: .*bubblewrap \(bwrap\) was not found in the system directories/);
  match(run.stdout, /^1 problem to fix:$/m);
  match(run.stdout, /^ {2}- .*install bubblewrap \(apt-get install bubblewrap\)/m);
  match(run.stdout, /danger-full-access explicitly/);
  match(run.stdout, /^ {2}read-only: ok: .*refused by Deno \(NotCapable\)$/m);
});

Deno.test("mewcode doctor --read-only does not count a missing shell sandbox as a problem", async () => {
  await using workspace = await createTempWorkspace();
  const run = await doctorWith(workspace.root, ["--read-only"], WITHOUT_BUBBLEWRAP);
  equal(run.code, 0, run.stdout);
  match(run.stdout, /--read-only offers no Bash/);
  equal(/^ {2}(writer|shell): (ok|FAILED):/m.test(run.stdout), false, run.stdout);
  match(run.stdout, /^Everything (works\.|else works: set ANTHROPIC_API_KEY to run a prompt\.)$/m);
});

Deno.test("mewcode doctor shows the provider, its base URL and that it answers, never the key", async () => {
  await using workspace = await createTempWorkspace();
  await using server = await startFakeOpenAi([], { models: ["gpt-test", "gpt-other"] });
  const run = await runMewcode(["doctor", "--provider", "openai", "--model", "gpt-test"], {
    cwd: workspace.root,
    env: server.env(),
  });
  equal(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, /^Provider: openai \(model gpt-test\)$/m);
  match(run.stdout, new RegExp(`^ {2}base URL: ${server.baseUrl}$`, "m"));
  match(run.stdout, /^ {2}key: OPENAI_API_KEY is set$/m);
  match(run.stdout, /^ {2}answers: ok \(\d+ ms, 2 models listed\)$/m);
  equal(run.stdout.includes(server.apiKey), false, "the key is never printed");
  equal(server.requests[0]?.path, "/v1/models");
});

Deno.test("mewcode doctor counts a provider that does not answer as a problem", async () => {
  await using workspace = await createTempWorkspace();
  const port = closedPort();
  const run = await runMewcode(["doctor", "--model", "ollama/qwen3-coder"], {
    cwd: workspace.root,
    env: { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` },
  });
  equal(run.code, 1, run.stdout + run.stderr);
  match(run.stdout, /^Provider: ollama \(model qwen3-coder\)$/m);
  match(run.stdout, /^ {2}key: none needed$/m);
  match(run.stdout, /^ {2}answers: FAILED: Cannot reach the API at "http:\/\/127\.0\.0\.1:\d+\/v1"/m);
  match(run.stdout, /^ {2}- the ollama provider at "http:\/\/127\.0\.0\.1:\d+\/v1" does not answer: /m);
});

Deno.test("mewcode doctor masks the password of a base URL in its base URL line and its problems", async () => {
  await using workspace = await createTempWorkspace();
  const port = closedPort();
  const run = await runMewcode(["doctor", "--model", "ollama/qwen3-coder"], {
    cwd: workspace.root,
    env: { OPENAI_BASE_URL: `http://user:PASSWORD@127.0.0.1:${port}/v1` },
  });
  equal(run.code, 1, run.stdout + run.stderr);
  match(run.stdout, new RegExp(`^ {2}base URL: http://user:\\*\\*\\*@127\\.0\\.0\\.1:${port}/v1$`, "m"));
  match(
    run.stdout,
    /^ {2}answers: FAILED: Cannot reach the API at "http:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/v1"/m,
  );
  equal(`${run.stdout}${run.stderr}`.includes("PASSWORD"), false, run.stdout);
});

Deno.test("mewcode doctor gives up on a silent provider after its timeout", async () => {
  await using workspace = await createTempWorkspace();
  // Accepts connections and never answers.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const connection of silent) held.push(connection);
  })();
  let stdout = "";
  try {
    await runDoctor({
      workspace: { root: workspace.root, aliases: [] },
      options: parseCli(["doctor", "--read-only", "--model", "openai/gpt-test"]),
      helpers: WITHOUT_BUBBLEWRAP,
      env: {
        ...Deno.env.toObject(),
        OPENAI_API_KEY: "sk-silent",
        OPENAI_BASE_URL: `http://127.0.0.1:${silent.addr.port}/v1`,
      },
      print: (text) => (stdout += text),
      providerTimeoutMs: 300,
    });
  } finally {
    silent.close();
    await accepting.catch(() => undefined);
    for (const connection of held) connection.close();
  }
  match(stdout, /^ {2}answers: FAILED: no answer within 0\.3 s$/m);
});

Deno.test("mewcode doctor says a missing key is needed to run a prompt, without counting it as a problem", async () => {
  await using workspace = await createTempWorkspace();
  const run = await doctorWith(
    workspace.root,
    ["--read-only", "--provider", "openai", "--model", "m"],
    WITHOUT_BUBBLEWRAP,
    {
      OPENAI_API_KEY: "",
    },
  );
  equal(run.code, 0, run.stdout);
  match(run.stdout, /^ {2}key: OPENAI_API_KEY is not set, so a prompt cannot run: /m);
  // Round 17: it ended "Everything works." though no prompt could run.
  match(run.stdout, /^Everything else works: set OPENAI_API_KEY to run a prompt\.$/m);
  ok(!run.stdout.includes("Everything works."), run.stdout);
});

Deno.test("mewcode doctor counts a provider without a model as a problem", async () => {
  await using workspace = await createTempWorkspace();
  await using server = await startFakeOpenAi([], { apiKey: null });
  const run = await doctorWith(workspace.root, ["--read-only", "--provider", "ollama"], WITHOUT_BUBBLEWRAP, {
    OPENAI_BASE_URL: server.baseUrl,
  });
  equal(run.code, 1, run.stdout);
  match(run.stdout, /^Provider: ollama \(model none\)$/m);
  match(
    run.stdout,
    /^ {2}- Cannot use the ollama provider without a model: name one with --model ollama\/<model>/m,
  );
  match(run.stdout, /^ {2}answers: ok /m);
});

Deno.test("mewcode doctor counts a state folder that is not a folder as a problem", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace();
  const home = `${state.root}/state-is-a-file`;
  await Deno.writeTextFile(home, "");
  const run = await doctorWith(workspace.root, ["--read-only"], WITHOUT_BUBBLEWRAP, { MEWCODE_HOME: home });
  equal(run.code, 1, run.stdout);
  const problem =
    `the state folder "${home}" (MEWCODE_HOME, default ~/.mewcode) is not a folder: no session ` +
    "can be kept in it; point MEWCODE_HOME at a folder, or move the entry away";
  ok(run.stdout.includes(`  state folder: FAILED: ${problem}\n`), run.stdout);
  ok(run.stdout.includes(`  - ${problem}`), run.stdout);
});

Deno.test("mewcode doctor's protected-paths line names every path the writers protect", async () => {
  await using workspace = await createTempWorkspace();
  const run = await runMewcode(["doctor"], { cwd: workspace.root });
  const line = run.stdout.split("\n").find((text) => text.startsWith("  protected in the workspace")) ?? "";
  for (const { path } of PROTECTED_PATHS) {
    ok(line.includes(path), `the line names ${path}: ${line}`);
  }
  match(line, /\.git \(at any depth\)/);
  match(line, /\.claude\/ \(at any depth\)/);
});

Deno.test("doctor names the program that runs: the sources, or the bundle with when its sources were copied", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-doctor-program-" });
  try {
    equal(programLine(`file://${dir}/main.ts`), `Program: ${dir}/main.ts`);
    await Deno.mkdir(`${dir}/bundle`);
    await Deno.writeTextFile(`${dir}/bundle/main.js`, "");
    equal(
      programLine(`file://${dir}/bundle/main.js`),
      `Program: ${dir}/bundle/main.js (the bundle; "deno task bundle" builds it again)`,
    );
    const copied = new Date("2026-11-30T10:20:30.000Z");
    await Deno.writeTextFile(`${dir}/bundle/stamp`, "");
    await Deno.utime(`${dir}/bundle/stamp`, copied, copied);
    equal(
      programLine(`file://${dir}/bundle/main.js`),
      `Program: ${dir}/bundle/main.js (the bundle of the sources as they were at 2026-11-30T10:20:30.000Z; ` +
        `"deno task bundle" builds it again)`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

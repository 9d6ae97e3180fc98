/**
 * End to end: a trusted repository's plain `model` never moves the run off the provider the user's
 * settings choose, so the user's endpoint (`baseUrl`) never receives another provider's key. Real
 * `scripts/mewcode` processes, real settings files, and the fake chat completions server, which records
 * every request it gets (whatever its path) over real HTTP.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { chatTurn, type FakeOpenAi, startFakeOpenAi } from "../fake_anthropic/openai_server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { type CliRun, runMewcode } from "../_fakes/run_cli.ts";

const USER_ANTHROPIC_KEY = "sk-ant-USERKEY";

function explain(run: CliRun, server: FakeOpenAi): string {
  const requests = server.requests.map((request) => `${request.method} ${request.path}`).join(", ");
  return `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}\nrequests: ${requests}`;
}

/** Runs `mewcode -p hi --trust` with the user's settings and the repository's `{"model": repositoryModel}`. */
async function runTrusted(
  box: E2eWorkspace,
  userSettings: Record<string, string>,
  repositoryModel: string,
  env: Record<string, string>,
): Promise<{ result: CliRun; repositoryFile: string }> {
  await Deno.writeTextFile(join(box.home, "settings.json"), JSON.stringify(userSettings));
  const repositoryFile = await box.write(
    ".mewcode/settings.json",
    JSON.stringify({ model: repositoryModel }),
  );
  const result = await runMewcode(["-p", "hi", "--trust"], {
    cwd: box.root,
    env: { MEWCODE_HOME: box.home, ANTHROPIC_API_KEY: USER_ANTHROPIC_KEY, ...env },
  });
  return { result, repositoryFile };
}

Deno.test("e2e provider choice: a trusted repository's plain model does not switch the user's provider, so the Anthropic key never reaches the user's endpoint", async (t) => {
  const cases = [
    { name: "ollama", userModel: "ollama/qwen3", sentModel: "qwen3", apiKey: null, authorization: "ollama" },
    {
      name: "openai (vLLM)",
      userModel: "openai/qwen3-coder",
      sentModel: "qwen3-coder",
      apiKey: "sk-vllm-user",
      authorization: "sk-vllm-user",
    },
  ];
  for (const { name, userModel, sentModel, apiKey, authorization } of cases) {
    await t.step(name, async () => {
      await using box = await E2eWorkspace.create();
      await using server = await startFakeOpenAi([chatTurn().text("From the user's server.")], { apiKey });
      const { result, repositoryFile } = await runTrusted(
        box,
        { model: userModel, baseUrl: server.baseUrl },
        "claude-sonnet-4-5",
        { OPENAI_API_KEY: apiKey ?? "" },
      );
      const why = explain(result, server);
      for (const request of server.requests) {
        ok(!JSON.stringify(request.headers).includes(USER_ANTHROPIC_KEY), `the Anthropic key leaked: ${why}`);
        equal(`${request.method} ${request.path}`, "POST /v1/chat/completions", why);
      }
      equal(result.code, 0, why);
      equal(result.stdout, "From the user's server.\n", why);
      equal(server.completions.length, 1, why);
      equal(server.completions[0]?.headers.authorization, `Bearer ${authorization}`, why);
      equal((server.completions[0]?.body as { model: string }).model, sentModel, why);
      ok(
        result.stderr.includes(
          `Not applied from "${repositoryFile}": model "claude-sonnet-4-5": it would switch`,
        ),
        why,
      );
      ok(result.stderr.includes("a repository may never set this, even when trusted"), why);
    });
  }
});

Deno.test("e2e provider choice: a trusted repository's plain model is sent to the provider the user's settings name", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeOpenAi([chatTurn().text("Repository model.")]);
  const { result } = await runTrusted(
    box,
    { provider: "openai", baseUrl: server.baseUrl },
    "repository-model",
    { OPENAI_API_KEY: server.apiKey },
  );
  const why = explain(result, server);
  equal(result.code, 0, why);
  equal(result.stdout, "Repository model.\n", why);
  equal((server.completions[0]?.body as { model: string }).model, "repository-model", why);
  equal(server.completions[0]?.headers.authorization, `Bearer ${server.apiKey}`, why);
  ok(!result.stderr.includes("Not applied"), why);
});

import { deepStrictEqual, equal, match, ok, throws } from "node:assert/strict";
import { SETTINGS_PROVIDERS } from "../../src/config/settings_schema.ts";
import { PROVIDERS } from "../../src/cli/options.ts";
import {
  OLLAMA_DEFAULT_BASE_URL,
  OPENAI_DEFAULT_BASE_URL,
  providerConfigFromEnv,
} from "../../src/llm/create_provider.ts";
import { errorCategory, MissingApiKeyError } from "../../src/llm/errors.ts";
import {
  missingModelMessage,
  PROVIDER_KINDS,
  type ProviderChoice,
  type ProviderChoiceInput,
  type ProviderSettings,
  resolveProviderChoice,
  splitProviderPrefix,
} from "../../src/llm/provider_choice.ts";

const NO_SETTINGS: ProviderSettings = { provider: null, model: null, baseUrl: null, apiKeyEnv: null };

function choose(input: Partial<ProviderChoiceInput>): ProviderChoice {
  return resolveProviderChoice({
    cliProvider: null,
    cliModel: null,
    settings: NO_SETTINGS,
    defaultModel: "claude-default",
    ...input,
  });
}

function brief(choice: ProviderChoice): string {
  return `${choice.kind} ${choice.model ?? "(none)"} ${choice.baseUrl ?? "-"} ${choice.apiKeyEnv ?? "-"}`;
}

Deno.test("resolveProviderChoice picks the provider from the flags, the model's prefix and the user's settings", async (t) => {
  const openRouter: ProviderSettings = {
    provider: "openai",
    model: "anthropic/claude-sonnet-4.5",
    baseUrl: "https://openrouter.ai/api/v1",
    apiKeyEnv: "OPENROUTER_API_KEY",
  };
  const cases: [string, Partial<ProviderChoiceInput>, string][] = [
    ["nothing: anthropic and the default model", {}, "anthropic claude-default - -"],
    [
      "--model openai/gpt-5: the prefix picks and is stripped",
      { cliModel: "openai/gpt-5" },
      "openai gpt-5 - -",
    ],
    ["--model ollama/qwen3-coder", { cliModel: "ollama/qwen3-coder" }, "ollama qwen3-coder - -"],
    [
      "a prefix that names no provider stays in the id",
      { cliModel: "meta/llama" },
      "anthropic meta/llama - -",
    ],
    ["--provider ollama --model qwen3", { cliProvider: "ollama", cliModel: "qwen3" }, "ollama qwen3 - -"],
    [
      "--provider keeps a slash in the model as written",
      { cliProvider: "openai", cliModel: "openai/gpt-5" },
      "openai openai/gpt-5 - -",
    ],
    [
      "the settings' provider sends their model whole, with their endpoint and key variable",
      { settings: openRouter },
      "openai anthropic/claude-sonnet-4.5 https://openrouter.ai/api/v1 OPENROUTER_API_KEY",
    ],
    [
      "a bare --model uses the settings' provider and endpoint",
      { settings: openRouter, cliModel: "x-ai/grok-4" },
      "openai x-ai/grok-4 https://openrouter.ai/api/v1 OPENROUTER_API_KEY",
    ],
    [
      "a prefixed --model overrides the settings' provider, whose endpoint then does not apply",
      { settings: openRouter, cliModel: "ollama/qwen3" },
      "ollama qwen3 - -",
    ],
    [
      "--provider of another kind takes neither the settings' model nor endpoint",
      { settings: openRouter, cliProvider: "anthropic" },
      "anthropic claude-default - -",
    ],
    [
      "a settings model with a prefix picks its provider, and the endpoint with it",
      { settings: { ...NO_SETTINGS, model: "ollama/qwen3-coder", baseUrl: "http://gpu:11434/v1" } },
      "ollama qwen3-coder http://gpu:11434/v1 -",
    ],
    [
      "a continued session keeps its recorded provider and model",
      { recorded: { provider: "openai", model: "gpt-5" } },
      "openai gpt-5 - -",
    ],
    [
      "flags win over the recorded provider",
      { recorded: { provider: "openai", model: "gpt-5" }, cliModel: "claude-x" },
      "anthropic claude-x - -",
    ],
    [
      "a recorded provider mewcode does not know is ignored",
      { recorded: { provider: "scripted", model: "s" } },
      "anthropic claude-default - -",
    ],
  ];
  for (const [name, input, expected] of cases) {
    await t.step(name, () => equal(brief(choose(input)), expected));
  }
});

Deno.test("resolveProviderChoice names no model for openai or ollama when nothing names one, and says how to", () => {
  const choice = choose({ cliProvider: "ollama" });
  equal(choice.model, null);
  match(
    missingModelMessage(choice) ?? "",
    /^Cannot use the ollama provider without a model: name one with --model ollama\/<model> or the "model" setting$/,
  );
  equal(missingModelMessage(choose({})), null, "anthropic has a default");
});

Deno.test("splitProviderPrefix needs a known provider and a model after the slash", () => {
  deepStrictEqual(splitProviderPrefix("openai/gpt-5"), { kind: "openai", model: "gpt-5" });
  deepStrictEqual(splitProviderPrefix("ollama/hf.co/org/model:Q4"), {
    kind: "ollama",
    model: "hf.co/org/model:Q4",
  });
  equal(splitProviderPrefix("openai/"), null);
  equal(splitProviderPrefix("/gpt-5"), null);
  equal(splitProviderPrefix("claude-sonnet-5-5"), null);
});

Deno.test("the provider names agree across --provider, the settings schema and the llm module", () => {
  deepStrictEqual([...PROVIDERS], [...PROVIDER_KINDS]);
  deepStrictEqual([...SETTINGS_PROVIDERS], [...PROVIDER_KINDS]);
});

Deno.test("providerConfigFromEnv reads each provider's key and endpoint, the settings' over the environment", async (t) => {
  const env = (values: Record<string, string>) => new Map(Object.entries(values));
  await t.step("openai from OPENAI_API_KEY, default base URL", () => {
    deepStrictEqual(providerConfigFromEnv(env({ OPENAI_API_KEY: " sk-1 " }), { kind: "openai" }), {
      kind: "openai",
      apiKey: "sk-1",
      baseUrl: OPENAI_DEFAULT_BASE_URL,
    });
  });
  await t.step("openai from OPENAI_BASE_URL", () => {
    const config = providerConfigFromEnv(
      env({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://vllm:8000/v1" }),
      {
        kind: "openai",
      },
    );
    equal(config.baseUrl, "http://vllm:8000/v1");
  });
  await t.step("the settings' base URL and key variable win", () => {
    const config = providerConfigFromEnv(
      env({ OPENAI_API_KEY: "wrong", OPENROUTER_API_KEY: "or-key", OPENAI_BASE_URL: "http://elsewhere/v1" }),
      { kind: "openai", baseUrl: "https://openrouter.ai/api/v1", apiKeyEnv: "OPENROUTER_API_KEY" },
    );
    deepStrictEqual(config, { kind: "openai", apiKey: "or-key", baseUrl: "https://openrouter.ai/api/v1" });
  });
  await t.step("ollama needs no key and defaults to the local server", () => {
    deepStrictEqual(providerConfigFromEnv(env({ OPENAI_API_KEY: "not-for-ollama" }), { kind: "ollama" }), {
      kind: "ollama",
      apiKey: null,
      baseUrl: OLLAMA_DEFAULT_BASE_URL,
    });
  });
  await t.step("anthropic stays as it was", () => {
    deepStrictEqual(providerConfigFromEnv(env({ ANTHROPIC_API_KEY: "a", ANTHROPIC_BASE_URL: "http://p" })), {
      kind: "anthropic",
      apiKey: "a",
      baseUrl: "http://p",
    });
  });
});

Deno.test("providerConfigFromEnv throws an authentication error naming the missing variable", async (t) => {
  const cases: [Parameters<typeof providerConfigFromEnv>[1], Record<string, string>, string][] = [
    [{ kind: "openai" }, { OPENAI_API_KEY: "  " }, "OPENAI_API_KEY"],
    [{ kind: "openai", apiKeyEnv: "OPENROUTER_API_KEY" }, { OPENAI_API_KEY: "k" }, "OPENROUTER_API_KEY"],
    [{ kind: "ollama", apiKeyEnv: "OLLAMA_KEY" }, {}, "OLLAMA_KEY"],
    [{ kind: "anthropic" }, {}, "ANTHROPIC_API_KEY"],
  ];
  for (const [endpoint, values, variable] of cases) {
    await t.step(`${endpoint?.kind} ${variable}`, () => {
      throws(() => providerConfigFromEnv(new Map(Object.entries(values)), endpoint), (error: unknown) => {
        ok(error instanceof MissingApiKeyError);
        equal(error.variable, variable);
        match(error.message, new RegExp(`${variable} is not set: .*export ${variable}=<your key>`));
        equal(errorCategory(error), "authentication");
        return true;
      });
    });
  }
});

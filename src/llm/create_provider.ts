/**
 * Builds the provider a session talks to, from its configuration. The provider's module is loaded only here,
 * on demand (lazy_import.ts): commands that never talk to a model start without it, and an Anthropic run
 * never reads the OpenAI-compatible provider's modules, nor the other way round.
 *
 * Where each provider's key and endpoint come from (the settings' `apiKeyEnv` and `baseUrl`, when they
 * apply, win over the environment, so a key never travels to an endpoint configured somewhere else):
 *
 *   anthropic  key: ANTHROPIC_API_KEY (required)   base URL: ANTHROPIC_BASE_URL, else https://api.anthropic.com
 *   openai     key: OPENAI_API_KEY (required)      base URL: OPENAI_BASE_URL, else https://api.openai.com/v1
 *   ollama     key: none (only `apiKeyEnv`)        base URL: OPENAI_BASE_URL, else http://127.0.0.1:11434/v1
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { lazyImport } from "../common/lazy_import.ts";
import { MissingApiKeyError } from "./errors.ts";
import type { Provider } from "./provider.ts";
import type { ProviderKind } from "./provider_choice.ts";
import type { RetryOptions } from "./retry.ts";

export type { ProviderKind };

/** Reads environment variables (`Deno.env` fits). */
export interface EnvLookup {
  get(name: string): string | undefined;
}

/** The official OpenAI API, for `openai` without OPENAI_BASE_URL. */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** A local Ollama server's OpenAI-compatible API, for `ollama` without OPENAI_BASE_URL. */
export const OLLAMA_DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1";

/** Which provider to use and how to reach it. */
export type ProviderConfig =
  | {
    kind: "anthropic";
    apiKey: string;
    /** The API's base URL; the provider's default when omitted. */
    baseUrl?: string;
    retry?: RetryOptions;
    /** How long the API may stay silent before the request counts as a connection failure. */
    idleTimeoutMs?: number;
  }
  | {
    kind: "openai" | "ollama";
    /** null: the server needs none (Ollama). */
    apiKey: string | null;
    /** The API's base URL, ending before `/chat/completions` (`…/v1`). */
    baseUrl: string;
    retry?: RetryOptions;
    idleTimeoutMs?: number;
  };

/** Which provider, and the settings that say where its key and endpoint are (null: the environment decides). */
export interface ProviderEndpoint {
  kind: ProviderKind;
  baseUrl?: string | null;
  apiKeyEnv?: string | null;
}

/**
 * The configuration of a provider (Anthropic when no endpoint is given) from the environment and the
 * endpoint's settings; throws MissingApiKeyError (naming the variable) when a required key is missing or
 * empty, before any request.
 */
export function providerConfigFromEnv(
  env: EnvLookup,
  endpoint: ProviderEndpoint = { kind: "anthropic" },
): ProviderConfig {
  const read = (name: string) => env.get(name)?.trim() || null;
  const keyVariable = endpoint.apiKeyEnv ?? null;
  const configuredUrl = endpoint.baseUrl?.trim() || null;
  switch (endpoint.kind) {
    case "anthropic": {
      const variable = keyVariable ?? "ANTHROPIC_API_KEY";
      const apiKey = read(variable);
      if (apiKey === null) throw new MissingApiKeyError({ provider: "anthropic", variable });
      const baseUrl = configuredUrl ?? read("ANTHROPIC_BASE_URL");
      return { kind: "anthropic", apiKey, ...(baseUrl === null ? {} : { baseUrl }) };
    }
    case "openai": {
      const variable = keyVariable ?? "OPENAI_API_KEY";
      const apiKey = read(variable);
      if (apiKey === null) throw new MissingApiKeyError({ provider: "openai", variable });
      return {
        kind: "openai",
        apiKey,
        baseUrl: configuredUrl ?? read("OPENAI_BASE_URL") ?? OPENAI_DEFAULT_BASE_URL,
      };
    }
    case "ollama": {
      const apiKey = keyVariable === null ? null : read(keyVariable);
      if (keyVariable !== null && apiKey === null) {
        throw new MissingApiKeyError({ provider: "ollama", variable: keyVariable });
      }
      return {
        kind: "ollama",
        apiKey,
        baseUrl: configuredUrl ?? read("OPENAI_BASE_URL") ?? OLLAMA_DEFAULT_BASE_URL,
      };
    }
    default:
      return assertNever(endpoint.kind);
  }
}

/** The base URL a configuration sends requests to (the provider's default when it names none). */
export function baseUrlOf(config: ProviderConfig): string {
  return config.kind === "anthropic" ? config.baseUrl ?? "https://api.anthropic.com" : config.baseUrl;
}

/** Builds the provider of a configuration. */
export async function createProvider(config: ProviderConfig): Promise<Provider> {
  switch (config.kind) {
    case "anthropic": {
      const { AnthropicProvider } = await lazyImport<typeof import("./anthropic_provider.ts")>(
        new URL("./anthropic_provider.ts", import.meta.url),
      );
      const { kind: _kind, ...options } = config;
      return new AnthropicProvider(options);
    }
    case "openai":
    case "ollama": {
      const { OpenAiProvider } = await lazyImport<typeof import("./openai_provider.ts")>(
        new URL("./openai_provider.ts", import.meta.url),
      );
      const { kind, ...options } = config;
      return new OpenAiProvider({ ...options, name: kind });
    }
    default:
      return assertNever(config);
  }
}

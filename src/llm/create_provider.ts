/**
 * Builds the provider a session talks to, from its configuration. The provider's module (and its SDK) is
 * loaded only here, on demand: commands that never talk to a model start without it.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { MissingApiKeyError } from "./errors.ts";
import type { Provider } from "./provider.ts";
import type { RetryOptions } from "./retry.ts";

/** Reads environment variables (`Deno.env` fits). */
export interface EnvLookup {
  get(name: string): string | undefined;
}

/** Which provider to use and how to reach it. */
export type ProviderConfig = {
  kind: "anthropic";
  apiKey: string;
  /** The API's base URL; the provider's default when omitted. */
  baseUrl?: string;
  retry?: RetryOptions;
  /** How long the API may stay silent before the request counts as a connection failure. */
  idleTimeoutMs?: number;
};

/**
 * The Anthropic configuration from ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL; throws MissingApiKeyError
 * (naming the variable) when the key is missing or empty, before any request.
 */
export function providerConfigFromEnv(env: EnvLookup): ProviderConfig {
  const apiKey = env.get("ANTHROPIC_API_KEY")?.trim() ?? "";
  if (apiKey === "") throw new MissingApiKeyError();
  const baseUrl = env.get("ANTHROPIC_BASE_URL")?.trim();
  return { kind: "anthropic", apiKey, ...(baseUrl ? { baseUrl } : {}) };
}

/** Builds the provider of a configuration. */
export async function createProvider(config: ProviderConfig): Promise<Provider> {
  switch (config.kind) {
    case "anthropic": {
      const { AnthropicProvider } = await import("./anthropic_provider.ts");
      const { kind: _kind, ...options } = config;
      return new AnthropicProvider(options);
    }
    default:
      return assertNever(config.kind);
  }
}

/**
 * Which provider a run talks to and which model id it sends, from the command line and the user's
 * settings. Pure: reading the environment (keys, base URLs) is create_provider.ts's job.
 *
 * The settings describe one provider: their `provider`, else the provider their `model`'s prefix names,
 * else anthropic. Their `model`, `baseUrl` and `apiKeyEnv` apply when the run uses that provider. Then:
 *
 *   --provider P          P; the model is --model as written, or the settings' model when they describe P
 *   --model P/ID          P (anthropic, openai or ollama), model ID: the prefix picks the provider
 *   --model ID            the settings' provider, model ID as written
 *   neither               a continued session's recorded provider and model; else the settings'
 *
 * A model id given with a provider is never split, so OpenRouter's `anthropic/claude-sonnet-4.5` reaches
 * OpenRouter whole with `--provider openai` (or the `provider` setting).
 *
 * The settings' provider is always the user's: a repository's settings never reach this with a `provider`,
 * `baseUrl`, `apiKeyEnv`, or a `model` that would describe another provider than the user's settings do
 * (config/repository_screen.ts drops them), so `baseUrl` and `apiKeyEnv` serve the provider the user chose.
 *
 * @module
 */

/** The providers mewcode can talk to: Anthropic's API, any OpenAI-compatible one, and Ollama's. */
export const PROVIDER_KINDS = ["anthropic", "openai", "ollama"] as const;
/** One of PROVIDER_KINDS. */
export type ProviderKind = typeof PROVIDER_KINDS[number];

/** What the settings files say about the provider (null: not set). */
export interface ProviderSettings {
  provider: ProviderKind | null;
  model: string | null;
  baseUrl: string | null;
  apiKeyEnv: string | null;
}

/** What the choice is made from. */
export interface ProviderChoiceInput {
  /** `--provider`, or null. */
  cliProvider: ProviderKind | null;
  /** `--model`, or null. */
  cliModel: string | null;
  settings: ProviderSettings;
  /** The model when nothing names one and the provider is anthropic. */
  defaultModel: string;
  /** What a continued session recorded; used when the command line names neither provider nor model. */
  recorded?: { provider: string | null; model: string | null } | null;
}

/** The provider and model of a run, with the settings that apply to that provider. */
export interface ProviderChoice {
  kind: ProviderKind;
  /**
   * The model id as the provider takes it (a choosing prefix removed); null when nothing names one for a
   * provider other than anthropic, which has no default (see {@link missingModelMessage}).
   */
  model: string | null;
  /** The settings' base URL, when they describe this provider; null leaves it to the environment. */
  baseUrl: string | null;
  /** The settings' name of the variable holding the key, when they describe this provider. */
  apiKeyEnv: string | null;
}

/** Whether a string names a provider. */
export function isProviderKind(value: string): value is ProviderKind {
  return (PROVIDER_KINDS as readonly string[]).includes(value);
}

/**
 * Splits `openai/gpt-5` into its provider and model id; null when the part before the first `/` names no
 * provider, or nothing follows it.
 */
export function splitProviderPrefix(model: string): { kind: ProviderKind; model: string } | null {
  const slash = model.indexOf("/");
  if (slash <= 0) return null;
  const prefix = model.slice(0, slash);
  const rest = model.slice(slash + 1);
  if (!isProviderKind(prefix) || rest.trim() === "") return null;
  return { kind: prefix, model: rest };
}

/** Decides the provider and model (see the module doc). */
export function resolveProviderChoice(input: ProviderChoiceInput): ProviderChoice {
  const { cliProvider, cliModel, settings, recorded } = input;
  const fromSettings = settingsProvider(settings);
  let kind: ProviderKind;
  let model: string | null;
  const recordedKind = recorded?.provider ?? null;
  if (cliProvider !== null) {
    kind = cliProvider;
    model = cliModel ?? (fromSettings.kind === cliProvider ? fromSettings.model : null);
  } else if (cliModel !== null) {
    const split = splitProviderPrefix(cliModel);
    kind = split?.kind ?? fromSettings.kind;
    model = split?.model ?? cliModel;
  } else if (recordedKind !== null && isProviderKind(recordedKind)) {
    kind = recordedKind;
    model = recorded?.model || (kind === fromSettings.kind ? fromSettings.model : null);
  } else {
    kind = fromSettings.kind;
    model = fromSettings.model;
  }
  if (model === null || model.trim() === "") model = kind === "anthropic" ? input.defaultModel : null;
  const applies = kind === fromSettings.kind;
  return {
    kind,
    model,
    baseUrl: applies ? settings.baseUrl : null,
    apiKeyEnv: applies ? settings.apiKeyEnv : null,
  };
}

/** What to tell the user when a choice has no model (null when it has one). */
export function missingModelMessage(choice: ProviderChoice): string | null {
  if (choice.model !== null) return null;
  return `Cannot use the ${choice.kind} provider without a model: name one with --model ${choice.kind}/<model> ` +
    'or the "model" setting';
}

/** The provider the settings describe, and their model id for it. */
function settingsProvider(settings: ProviderSettings): { kind: ProviderKind; model: string | null } {
  if (settings.provider !== null) return { kind: settings.provider, model: settings.model };
  const split = settings.model === null ? null : splitProviderPrefix(settings.model);
  if (split !== null) return split;
  return { kind: "anthropic", model: settings.model };
}

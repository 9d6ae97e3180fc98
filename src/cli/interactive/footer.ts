/**
 * The status footer of the interactive session, shown above each prompt: model, permission mode, sandbox,
 * tokens in and out with cache hits, the session's cost, and how much of the model's context window the
 * conversation uses.
 *
 * @module
 */
import type { Usage } from "../../llm/provider.ts";
import { cut, sanitize } from "../_terminal_text.ts";
import type { Style } from "./style.ts";

/** What the footer shows. */
export interface FooterState {
  model: string;
  permissionMode: string;
  sandbox: string;
  /** Tokens of the whole session. */
  usage: Usage;
  /** The session's cost in US dollars, or null when the model has no known price. */
  costUsd: number | null;
  /** The prompt size of the last request (what the next one resends), or null before the first. */
  contextTokens: number | null;
  /** The model's context window, or null when unknown. */
  contextWindow: number | null;
}

/** The footer line, cut to the width. */
export function footerLine(state: FooterState, options: { width: number; style: Style }): string {
  const { usage } = state;
  const cached = usage.cacheReadInputTokens === 0 ? "" : `, ${tokens(usage.cacheReadInputTokens)} cached`;
  const input = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
  const parts = [
    // A trusted repository's settings name the model: shown, never obeyed by the terminal.
    sanitize(state.model),
    state.permissionMode,
    `sandbox ${state.sandbox}`,
    `${tokens(input)} in${cached} / ${tokens(usage.outputTokens)} out`,
    state.costUsd === null ? "cost unknown" : `$${state.costUsd.toFixed(state.costUsd < 1 ? 4 : 2)}`,
    contextText(state),
  ];
  return options.style.dim(cut(parts.join(" · "), Math.max(10, options.width - 1), "start"));
}

function contextText(state: FooterState): string {
  if (state.contextTokens === null) return "context 0%";
  if (state.contextWindow === null) return `context ${tokens(state.contextTokens)}`;
  const percent = Math.min(100, Math.round((state.contextTokens / state.contextWindow) * 100));
  return `context ${percent}% of ${tokens(state.contextWindow)}`;
}

/** 950, 12.3k, 1.2M. */
export function tokens(count: number): string {
  if (count < 1_000) return String(count);
  if (count < 1_000_000) return `${(count / 1_000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

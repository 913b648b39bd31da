// The budgets of a model request, counted in the tokens the route's model reports (token-calibration.ts): shares of
// the context length the mode's route declares, or the global settings (HISTORY_BUDGET_TOKENS, PROMPT_BUDGET_TOKENS)
// when it declares none. The loop measures text with our estimate (four characters a token), so each budget is
// also given in estimated tokens: the model's figure divided by the route's calibrated ratio.
import type { AgentConfig } from "./agent-config";

export type ContextBudgets = Pick<AgentConfig, "historyBudgetTokens" | "promptBudgetTokens">;

/** The share of a declared context length the earlier turns (and the summary) may fill. */
export const HISTORY_SHARE = 0.6;
/** The share the enhanced system prompt may fill; the rest is the tools', the current turn's and the answer's. */
export const PROMPT_SHARE = 0.15;
/** The share of a declared context kept for the answer (sent as `max_tokens`), at most MAX_ANSWER_TOKENS. */
export const ANSWER_SHARE = 0.1;
export const MAX_ANSWER_TOKENS = 4_096;
/** The share of the history budget the summary of the earlier conversation may fill (the summariser's max_tokens). */
export const SUMMARY_SHARE = 0.15;

export interface RouteBudgets extends ContextBudgets {
  /** The summary's budget, in estimated tokens. */
  summaryBudgetTokens: number;
  /** The summary's budget in the model's tokens: the summariser's `max_tokens`. */
  summaryMaxTokens: number;
  /** The route's declared context in the model's tokens; null: none declared (no request is checked against it). */
  contextTokens: number | null;
  /** The answer's reserve in the model's tokens, sent as `max_tokens`; null when the route declares no context. */
  answerTokens: number | null;
  /** Model tokens per estimated token on the route. */
  ratio: number;
}

/** The answer's reserve on a route declaring `contextTokens`: ANSWER_SHARE of it, at most MAX_ANSWER_TOKENS. */
export function answerReserve(contextTokens: number): number {
  return Math.min(MAX_ANSWER_TOKENS, Math.floor(contextTokens * ANSWER_SHARE));
}

/** The budgets on a route declaring `contextTokens` (or none) whose model counts `ratio` tokens per estimated one. */
export function contextBudgets(
  config: ContextBudgets,
  contextTokens: number | null | undefined,
  ratio = 1,
): RouteBudgets {
  const history = contextTokens ? Math.floor(contextTokens * HISTORY_SHARE) : config.historyBudgetTokens;
  const prompt = contextTokens ? Math.floor(contextTokens * PROMPT_SHARE) : config.promptBudgetTokens;
  const summary = Math.floor(history * SUMMARY_SHARE);
  const estimated = (modelTokens: number) => Math.floor(modelTokens / ratio);
  return {
    historyBudgetTokens: estimated(history),
    promptBudgetTokens: estimated(prompt),
    summaryBudgetTokens: estimated(summary),
    summaryMaxTokens: summary,
    contextTokens: contextTokens ?? null,
    answerTokens: contextTokens ? answerReserve(contextTokens) : null,
    ratio,
  };
}

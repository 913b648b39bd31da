// The history and prompt budgets of a model request: shares of the context length the mode's route declares, or the
// global settings (HISTORY_BUDGET_TOKENS, PROMPT_BUDGET_TOKENS) when it declares none.
import type { AgentConfig } from "./agent-config";

export type ContextBudgets = Pick<AgentConfig, "historyBudgetTokens" | "promptBudgetTokens">;

/** The share of a declared context length the earlier turns may fill. */
export const HISTORY_SHARE = 0.6;
/** The share the enhanced system prompt may fill; the rest is the current turn's and the answer's. */
export const PROMPT_SHARE = 0.15;

export function contextBudgets(config: ContextBudgets, contextTokens: number | null | undefined): ContextBudgets {
  if (!contextTokens) {
    return { historyBudgetTokens: config.historyBudgetTokens, promptBudgetTokens: config.promptBudgetTokens };
  }
  return {
    historyBudgetTokens: Math.floor(contextTokens * HISTORY_SHARE),
    promptBudgetTokens: Math.floor(contextTokens * PROMPT_SHARE),
  };
}

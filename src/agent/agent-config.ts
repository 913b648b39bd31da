// The agent loop's limits and formats, read from the Worker's vars (with the design document's defaults).
import { z } from "zod";
import { positiveIntVar as positive } from "../env-vars";
import type { ToolCallFormat } from "../prompts/system-prompt-enhancer";

export interface AgentConfig {
  toolFormat: ToolCallFormat;
  /** Model calls in one turn (the design document: 10). */
  maxIterations: number;
  /** Working time of one turn (the design document: 5 minutes); time paused for a person or client is not counted. */
  turnTimeoutMs: number;
  /** How long a paused turn waits for approvals or client results before it expires. */
  pauseTtlMs: number;
  /** Malformed JSON-format tool calls in a row before the turn fails (the design document: 3). */
  maxParseFailures: number;
  /** Characters of one tool result the model sees; the whole result stays in the session. */
  toolResultBudgetChars: number;
  /** Estimated tokens of earlier turns sent with each request. */
  historyBudgetTokens: number;
  /** Estimated tokens of the enhanced system prompt. */
  promptBudgetTokens: number;
  /** One model call's timeout. */
  modelCallTimeoutMs: number;
}

const AgentEnv = z.object({
  LLM_TOOL_FORMAT: z.enum(["native", "json"]).catch("native"),
  AGENT_MAX_ITERATIONS: positive(10),
  AGENT_TURN_TIMEOUT_MS: positive(300_000),
  AGENT_PAUSE_TTL_MS: positive(86_400_000),
  AGENT_MAX_PARSE_FAILURES: positive(3),
  TOOL_RESULT_BUDGET_CHARS: positive(16_000),
  HISTORY_BUDGET_TOKENS: positive(24_000),
  PROMPT_BUDGET_TOKENS: positive(6_000),
  MODEL_CALL_TIMEOUT_MS: positive(120_000),
});

/** Reads only the vars it knows; anything missing or malformed falls back to its default. */
export function agentConfigFromEnv(env: object): AgentConfig {
  const e = AgentEnv.parse(env);
  return {
    toolFormat: e.LLM_TOOL_FORMAT,
    maxIterations: e.AGENT_MAX_ITERATIONS,
    turnTimeoutMs: e.AGENT_TURN_TIMEOUT_MS,
    pauseTtlMs: e.AGENT_PAUSE_TTL_MS,
    maxParseFailures: e.AGENT_MAX_PARSE_FAILURES,
    toolResultBudgetChars: e.TOOL_RESULT_BUDGET_CHARS,
    historyBudgetTokens: e.HISTORY_BUDGET_TOKENS,
    promptBudgetTokens: e.PROMPT_BUDGET_TOKENS,
    modelCallTimeoutMs: e.MODEL_CALL_TIMEOUT_MS,
  };
}

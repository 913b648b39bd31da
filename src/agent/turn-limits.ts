// The limits that stop a turn (the design document's "Risks": iterations, time, malformed calls; and the
// pause expiry and per-key model call limit), each with a message that states its real figures.

import type { TurnError } from "../wire/turn";
import type { AgentConfig } from "./agent-config";

export type TurnLimit =
  | "iteration_limit"
  | "turn_timeout"
  | "malformed_tool_calls"
  | "pause_expired"
  | "rate_limit_exceeded"
  | "budget_exceeded";

/** 300000 -> "5 min", 4200 -> "4.2 s", 86400000 -> "24 h": one decimal at most, in the largest unit. */
export function formatDuration(ms: number): string {
  const round = (n: number) => String(Math.round(n * 10) / 10);
  if (ms < 60_000) return `${round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${round(ms / 60_000)} min`;
  return `${round(ms / 3_600_000)} h`;
}

/**
 * The error a turn ends with when `limit` stops it. `figure` is what was measured: model calls made,
 * working time, malformed replies in a row, the pause's length, or seconds until the key may call again.
 */
export function turnLimitError(
  limit: TurnLimit,
  figure: number,
  config: Pick<AgentConfig, "maxIterations" | "turnTimeoutMs">,
  detail?: string,
): TurnError {
  switch (limit) {
    case "iteration_limit":
      return {
        code: limit,
        message: `The turn stopped at the iteration limit: ${figure} model calls without a final answer (the limit is ${config.maxIterations}).`,
      };
    case "turn_timeout":
      return {
        code: limit,
        message: `The turn stopped at the time limit: it worked ${formatDuration(figure)} without a final answer (the limit is ${formatDuration(config.turnTimeoutMs)} of working time; waiting for approvals or client results does not count).`,
      };
    case "malformed_tool_calls":
      return {
        code: limit,
        message: `The model sent ${figure} malformed tool calls in a row (last problem: ${detail ?? "unknown"}); the turn was stopped.`,
      };
    case "pause_expired":
      return {
        code: limit,
        message: `The turn waited ${formatDuration(figure)} for approvals or client results and expired; its pending tool calls were not executed.`,
      };
    case "budget_exceeded":
      return {
        code: limit,
        message: `The turn stopped before its next model call: ${detail ?? "a token or cost budget is spent."} Everything so far is kept.`,
      };
    case "rate_limit_exceeded":
      return {
        code: limit,
        message: `The turn stopped: this API key reached its limit of model calls per minute. Everything so far is kept; send a message again in ${figure} s.`,
      };
  }
}

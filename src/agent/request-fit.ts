// A request never exceeds its route's context: on a route that declares `contextTokens`, the system prompt, the
// tools, the summary, the kept turns and the answer's reserve (`max_tokens`) must fit it. The earlier turns get what
// the rest leaves (roomForHistory); what still does not fit (a prompt, a summary or the current turn too large) fails
// the step before the call with `context_length_exceeded`, naming each part's share. A request whose estimate comes
// near the limit is counted by the route's model first when it can count (Anthropic's count_tokens), and the count
// decides.
import { ModelError } from "../llm/chat-model";
import type { FormattedRequest } from "../routing/model-router";
import type { RouteBudgets } from "./context-budgets";
import { requestEstimate, type TokenCalibration } from "./token-calibration";

/** Past this share of the context, an estimate is near enough the limit to be counted by a model that counts. */
export const COUNT_AT = 0.9;
/** The share of the room the history is allowed, against the estimate's own error (JSON framing, rounding). */
const HISTORY_MARGIN = 0.95;

/** What the check of a request needs: its route's budgets and how its messages divide. */
export interface RequestFit {
  route: string;
  budgets: RouteBudgets;
  /** The request's second message is the summary of the earlier conversation. */
  summarised: boolean;
  /** How many of the last messages are the current turn's. */
  currentMessages: number;
}

/** Counts a request's input tokens with the serving route's model (null: it could not). */
export type CountTokens = (request: FormattedRequest) => Promise<number | null>;

/** The estimated tokens the history (summary, earlier turns, this turn) may take beside `fixed` (prompt and tools). */
export function roomForHistory(budgets: RouteBudgets, fixed: number): number {
  const { contextTokens, answerTokens, ratio } = budgets;
  if (contextTokens === null) return Number.POSITIVE_INFINITY;
  const room = (contextTokens - (answerTokens ?? 0)) / ratio - fixed;
  return Math.max(0, Math.floor(room * HISTORY_MARGIN));
}

/** The request's parts in the model's tokens (calibrated estimates). */
function partsOf(fit: RequestFit, sent: FormattedRequest): Record<string, number> {
  const tokens = (n: number) => Math.ceil(n * fit.budgets.ratio);
  const [system, ...rest] = sent.messages;
  const summary = fit.summarised ? rest.slice(0, 1) : [];
  const turns = rest.slice(summary.length);
  const current = turns.slice(Math.max(0, turns.length - fit.currentMessages));
  const earlier = turns.slice(0, turns.length - current.length);
  const size = (messages: typeof sent.messages) => (messages.length > 0 ? tokens(requestEstimate(messages)) : 0);
  return {
    "the system prompt": system ? size([system]) : 0,
    "the tools": sent.tools && sent.tools.length > 0 ? tokens(requestEstimate([], sent.tools)) : 0,
    "the summary": size(summary),
    "the earlier turns": size(earlier),
    "this turn": size(current),
    "the answer's reserve": fit.budgets.answerTokens ?? 0,
  };
}

/**
 * Throws `context_length_exceeded` when `sent` (with its answer's reserve) does not fit its route's declared context;
 * returns the estimate of `sent` (our tokens, uncalibrated), which the caller weighs against the usage reported.
 */
export async function checkFit(
  fit: RequestFit,
  sent: FormattedRequest,
  servedBy: string,
  count?: CountTokens,
  calibration?: TokenCalibration,
): Promise<number> {
  const estimate = requestEstimate(sent.messages, sent.tools ?? []);
  const { contextTokens, answerTokens, ratio } = fit.budgets;
  if (contextTokens === null) return estimate;
  const reserve = answerTokens ?? 0;
  let need = Math.ceil(estimate * ratio) + reserve;
  // Counted first near the limit, or while the route's model has not reported yet (the ratio is still a guess).
  const calibrated = calibration?.lastReport(servedBy) != null;
  if (need <= contextTokens * COUNT_AT && (calibrated || !count)) return estimate;
  const counted = count ? await count(sent) : null;
  if (counted !== null) {
    calibration?.observe(servedBy, estimate, counted);
    need = counted + reserve;
    if (need <= contextTokens) return estimate;
  } else if (need <= contextTokens) {
    return estimate;
  }
  const parts = partsOf(fit, sent);
  const listed = Object.entries(parts)
    .filter(([, n]) => n > 0)
    .map(([part, n]) => `${part} ${n}`)
    .join(", ");
  const fixed = (parts["the system prompt"] ?? 0) + (parts["the tools"] ?? 0) + reserve;
  const cause =
    fixed > contextTokens
      ? " The system prompt and tools alone do not fit beside the answer's reserve: give the mode fewer tools or a shorter prompt, or use a route with a larger context."
      : fixed + (parts["this turn"] ?? 0) > contextTokens
        ? " This turn's own messages do not fit beside the prompt and the answer's reserve (a message too large for this model): send a shorter message, or use a route with a larger context."
        : " Shorten the summary or the prompt, or use a route with a larger context.";
  const message =
    `The request needs about ${need} tokens but the model route '${fit.route}' declares a context of ` +
    `${contextTokens} (${listed}${counted !== null ? "; counted by the model" : ""}).${cause}`;
  throw new ModelError("context_length_exceeded", message, null, message);
}

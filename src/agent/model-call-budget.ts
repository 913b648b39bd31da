// The per-key limit on model calls, as the loop sees it: one `take()` before every model call.
import type { TokenUsage } from "../wire/turn";

export type ModelCallGrant = { ok: true } | { ok: false; retryAfterSeconds: number; message: string };

/** Counts one model call against the caller's key; refuses once the key is past its limit. */
export interface ModelCallBudget {
  take(): Promise<ModelCallGrant>;
}

/** What one model call used, for its reservation: the usage it reported, else the length of its answer. */
export interface CallUse {
  route: string;
  usage: Pick<TokenUsage, "promptTokens" | "completionTokens" | "cachedInputTokens" | "cacheWriteInputTokens"> | null;
  answerChars: number;
}

/** A model call's reservation in its org's meter: settled with what the call used, or released (null). */
export interface CallReservation {
  settle(used: CallUse | null): void;
}

export type CallAdmission =
  | { ok: true; reservation: CallReservation }
  | { ok: false; retryAfterSeconds: number; message: string };

/** The org's token and cost budgets, as the loop sees them: a reservation before every model call. */
export interface TurnMeter {
  /** Reserves for a call whose request has `promptChars` characters, on the route `route` names (when known). */
  reserve(promptChars: number, route: Promise<string> | string): Promise<CallAdmission>;
}

// The per-key limit on model calls, as the loop sees it: one `take()` before every model call.

export type ModelCallGrant = { ok: true } | { ok: false; retryAfterSeconds: number; message: string };

/** Counts one model call against the caller's key; refuses once the key is past its limit. */
export interface ModelCallBudget {
  take(): Promise<ModelCallGrant>;
}

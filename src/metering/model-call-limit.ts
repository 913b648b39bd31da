// One budget of model calls per API key (issue: "one request budget per key for everything that calls the
// model"): Cloudflare's rate limiting binding MODEL_CALL_LIMITER, counted under the key's id (never the key
// itself). The passthrough takes one call a request; an agent turn takes one before every model call.
import type { ModelCallBudget, ModelCallGrant } from "../agent/model-call-budget";
import type { AdminLogger } from "../observability/admin-logger";

/** wrangler.toml's `[[ratelimits]] simple.period`; the binding does not say when its window ends. */
export const MODEL_CALL_PERIOD_SECONDS = 60;

export const MODEL_CALL_LIMIT_MESSAGE =
  `Rate limit reached for this API key on model calls per minute (passthrough requests and agent turns ` +
  `count together). Please try again in ${MODEL_CALL_PERIOD_SECONDS}s.`;

let warnedUnbound = false;

/** Counts one model call for `keyId`. A missing binding or a failing limiter lets the call through, logged. */
export async function takeModelCall(
  limiter: RateLimit | undefined,
  keyId: string,
  logger: AdminLogger,
): Promise<ModelCallGrant> {
  if (!limiter) {
    // A deployment without the [[ratelimits]] binding has chosen no limit; say so once per isolate.
    if (!warnedUnbound) {
      warnedUnbound = true;
      logger.addCustomEvent(
        "Warning",
        "[model_call_limit]",
        "MODEL_CALL_LIMITER is not bound; model calls are not limited.",
      );
    }
    return { ok: true };
  }
  try {
    if ((await limiter.limit({ key: keyId })).success) return { ok: true };
  } catch (error) {
    // The limiter is a safeguard, not the service: if it fails, serve the call and say so in the logs.
    logger.addException("[model_call_limit]", error);
    return { ok: true };
  }
  return { ok: false, retryAfterSeconds: MODEL_CALL_PERIOD_SECONDS, message: MODEL_CALL_LIMIT_MESSAGE };
}

/** The budget an agent turn draws on: the key that sent the message, approval or result driving it. */
export function keyModelCallBudget(
  limiter: RateLimit | undefined,
  keyId: string,
  logger: AdminLogger,
): ModelCallBudget {
  return { take: () => takeModelCall(limiter, keyId, logger) };
}

/** A budget whose first call was already counted (to refuse a streamed message before its stream opens). */
export function prepaidBudget(budget: ModelCallBudget): ModelCallBudget {
  let prepaid = true;
  return {
    take: () => {
      if (!prepaid) return budget.take();
      prepaid = false;
      return Promise.resolve({ ok: true });
    },
  };
}

// Per-key request limit of the passthrough, counted by Cloudflare's rate limiting binding under the
// API key's id (never the key itself) and answered like OpenAI: 429, `Retry-After`, "rate_limit_exceeded".
import { createMiddleware } from "hono/factory";
import { errorBody } from "../errors";
import type { AppBindings } from "../http";

/** wrangler.toml's `[[ratelimits]] simple.period`; the binding does not say when its window ends. */
const PERIOD_SECONDS = 60;

let warnedUnbound = false;

export const passthroughRateLimit = createMiddleware<AppBindings>(async (c, next) => {
  const limiter: RateLimit | undefined = c.env.PASSTHROUGH_RATE_LIMITER;
  if (!limiter) {
    // A deployment without the [[ratelimits]] binding has chosen no limit; say so once per isolate.
    if (!warnedUnbound) {
      warnedUnbound = true;
      c.var.logger.addCustomEvent("Warning", "[passthrough_rate_limit]", "PASSTHROUGH_RATE_LIMITER is not bound.");
    }
    return next();
  }
  let allowed = true;
  try {
    allowed = (await limiter.limit({ key: c.var.principal.keyId })).success;
  } catch (error) {
    // The limiter is a safeguard, not the service: if it fails, serve the request and say so in the logs.
    c.var.logger.addException("[passthrough_rate_limit]", error);
  }
  if (!allowed) {
    return c.json(
      errorBody(
        `Rate limit reached for this API key on requests per minute. Please try again in ${PERIOD_SECONDS}s.`,
        "requests",
        "rate_limit_exceeded",
      ),
      429,
      { "retry-after": String(PERIOD_SECONDS) },
    );
  }
  await next();
});

// The passthrough's share of the per-key model call budget (src/metering/model-call-limit.ts): one call a
// request, answered like OpenAI past the limit: 429, `Retry-After`, "rate_limit_exceeded".
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors";
import type { AppBindings } from "../http";
import { takeModelCall } from "../metering/model-call-limit";

export const passthroughRateLimit = createMiddleware<AppBindings>(async (c, next) => {
  const grant = await takeModelCall(c.env.MODEL_CALL_LIMITER, c.get("principal").keyId, c.get("logger"));
  if (!grant.ok) {
    throw new ApiError("rate_limit_exceeded", grant.message, {
      headers: { "retry-after": String(grant.retryAfterSeconds) },
    });
  }
  await next();
});

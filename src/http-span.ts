// The Worker's request as a SERVER span: an incoming W3C `traceparent` is continued, the span is active for
// everything the request does (its session object call, its upstream requests), and it ends with the route, the
// status and who called (the key's id and the user, never the key), recorded after the reply. Tracing off: one
// settings lookup, then next().
import { context, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AppBindings } from "./http";
import { ATTR } from "./observability/tracing/attributes";
import { contextFromHeaders, contextWith, endAfterReply, tracingFor } from "./observability/tracing/tracing";
import type { Principal } from "./principal";

export const httpSpan: MiddlewareHandler<AppBindings> = async (c, next) => {
  let tracing: ReturnType<typeof tracingFor> = null;
  try {
    tracing = tracingFor(c.env);
  } catch {
    // A malformed var: answered by the settings middleware, untraced.
  }
  if (!tracing) return next();
  const method = c.req.method;
  const parent = contextFromHeaders(c.req.raw.headers);
  const span = tracing.tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { [ATTR.httpMethod]: method, [ATTR.urlPath]: c.req.path } },
    parent,
  );
  try {
    await context.with(contextWith(tracing, span, parent), next);
  } finally {
    // Its last attributes and its end after the reply (endAfterReply): what may still change is read now (the
    // matched route cannot once next() is done), all of it recorded off the reply's path.
    const status = c.res.status;
    const requestId = c.get("requestId");
    // Absent when the request was refused before its key was read.
    const principal = c.get("principal") as Principal | undefined;
    endAfterReply(span, () => {
      const route = matchedRoute(c);
      if (route) {
        span.updateName(`${method} ${route}`);
        span.setAttribute(ATTR.httpRoute, route);
      }
      span.setAttribute(ATTR.httpStatus, status);
      if (requestId) span.setAttribute(ATTR.requestId, requestId);
      if (principal) {
        span.setAttributes({ [ATTR.org]: principal.org, [ATTR.keyId]: principal.keyId, [ATTR.userId]: principal.user });
      }
      if (status >= 500) {
        span.setAttribute(ATTR.errorType, String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    });
  }
};

/** The route the request matched (`/context/sessions/:sessionId`), or null when none but middleware did. */
function matchedRoute(c: Parameters<MiddlewareHandler<AppBindings>>[0]): string | null {
  try {
    // The route that answered: the handler next() ran last (routes matched after it never ran).
    const path = routePath(c);
    return path === "*" || path === "/*" ? null : path;
  } catch {
    return null;
  }
}

// Hono middleware: every route but /healthz needs `Authorization: Bearer <key>`; some need a scope.
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors";
import type { AppBindings } from "../http";
import type { Scope } from "../principal";
import { authenticateApiKey } from "./api-keys";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export const requireApiKey = createMiddleware<AppBindings>(async (c, next) => {
  const header = c.req.header("authorization");
  if (!header) {
    throw new ApiError("missing_api_key", "Missing API key. Send it as 'Authorization: Bearer <key>'.");
  }
  const key = BEARER.exec(header)?.[1];
  let found = key ? await authenticateApiKey(c.var.db, key) : null;
  // A key the nearest replica does not know yet (just created) is looked up where it was written.
  if (key && found && !found.ok && found.reason === "unknown") {
    found = await authenticateApiKey(c.env.DB.withSession("first-primary"), key);
  }
  if (found && !found.ok && found.reason === "expired") {
    throw new ApiError("api_key_expired", "This API key has expired; ask an admin of your organization for a new one.");
  }
  if (!found?.ok) throw new ApiError("invalid_api_key", "Invalid API key.");
  const { principal } = found;
  c.set("principal", principal);
  c.set("logger", c.var.logger.with({ org: principal.org, keyId: principal.keyId }));
  await next();
});

export function requireScope(scope: Scope) {
  return createMiddleware<AppBindings>(async (c, next) => {
    if (!c.var.principal.scopes.includes(scope)) {
      throw new ApiError("insufficient_scope", `This API key lacks the '${scope}' scope.`);
    }
    await next();
  });
}

// Shared request plumbing for routes: the Hono context type and zod-checked JSON bodies.
import type { Context } from "hono";
import type { z } from "zod";
import type { Principal } from "./auth/api-keys";
import { ApiError } from "./errors";
import type { JsonAdminLogger } from "./observability/admin-logger";
import { quoted } from "./quote";

export interface AppBindings {
  Bindings: Cloudflare.Env;
  Variables: {
    principal: Principal;
    requestId: string;
    logger: JsonAdminLogger;
  };
}

export type AppContext = Context<AppBindings>;

/** The body as the schema's type, or a 400 that names the first field that is wrong. */
export async function readJsonBody<S extends z.ZodType>(c: AppContext, schema: S): Promise<z.output<S>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw ApiError.badRequest("The request body must be a JSON object.", null, "invalid_json");
  }
  return parseWith(schema, raw, "request body");
}

/**
 * zod-parses `value`; the error names the field path and what is wrong with it. A field the schema does not
 * know is named in `param` too (zod reports it on the object that holds it), quoted bounded.
 */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue?.path.map(String) ?? [];
  if (issue?.code === "unrecognized_keys") {
    const field = [...at, issue.keys[0] ?? ""].join(".");
    throw ApiError.badRequest(`Unknown field ${quoted(field)} in the ${what}.`, field, "unknown_field");
  }
  const path = at.join(".");
  const detail = issue?.message ?? "is invalid";
  const message = path ? `Invalid ${quoted(path)} in the ${what}: ${detail}.` : `Invalid ${what}: ${detail}.`;
  throw ApiError.badRequest(message, path || null);
}

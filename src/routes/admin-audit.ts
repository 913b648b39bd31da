// GET /admin/audit (admin scope): the audit log, newest first, a page at a time: an admin reads the changes made to
// their org's configuration, keys, users and budgets; an operator reads every row (the deployment's and every org's),
// or one org's (`org`), or the deployment's alone (`owner=deployment`).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, routes } from "../http";
import { AuditEntry, auditPage } from "../tenancy/audit-log";
import { isOperator } from "../tenancy/roles";

export const MAX_AUDIT_PAGE = 200;

const AuditQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_AUDIT_PAGE)
    .default(50)
    .describe(`Rows to answer (1 to ${MAX_AUDIT_PAGE}, 50 by default).`),
  before: z.coerce.number().int().min(1).optional().describe("The `seq` of the last row of the previous page."),
  org: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("Operators: one org's rows; an admin reads their own org's only."),
  owner: z
    .literal("deployment", { error: "must be 'deployment' (an org's rows: org=...)" })
    .optional()
    .describe("Operators: `deployment`, the changes to the deployment's configuration alone."),
});

export const adminAuditRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/admin/audit",
    summary: "The audit log, newest first: who changed what, before and after (secrets by name only)",
    security: BEARER,
    middleware: [requireScope("admin")] as const,
    tags: ["admin"],
    request: { query: AuditQuery },
    responses: {
      200: json(
        z.object({ entries: z.array(AuditEntry), next: z.number().int().nullable() }),
        "A page of rows; `next` is the `before` of the next page (null at the end).",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const query = c.req.valid("query");
    const principal = c.get("principal");
    let org: string | null | undefined;
    if (isOperator(principal))
      org = query.org === undefined ? undefined : query.org === "deployment" ? null : query.org;
    else if (query.org === undefined || query.org === principal.org) org = principal.org;
    else throw new ApiError("insufficient_scope", "Only an operator reads the audit log of another organization.");
    const entries = await auditPage(c.get("db"), { org, before: query.before ?? null, limit: query.limit });
    const next = entries.length === query.limit ? (entries.at(-1)?.seq ?? null) : null;
    return c.json({ entries, next }, 200);
  },
);

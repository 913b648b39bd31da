// /admin/keys, /admin/budget, /admin/usage (admin scope): an admin manages the keys of its own org (a new key
// is shown once; revoking takes effect at once in this isolate and within AUTH_CACHE_TTL_MS everywhere; a key is
// never given more than its maker holds, and an operator's key is an operator's to change), sets the org's and each
// key's token and cost budgets (kept in the org's OrgMeter, the one counter they are checked against), and reads the
// meter's rows grouped by day, key, model, mode or route, as JSON or CSV (an operator, any org's: `org`). An operator
// may make the first key of another org. Every change is in the audit log.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import {
  changeKeyStatement,
  forgetApiKey,
  hashApiKey,
  insertKeyStatement,
  liveKeys,
  revokeKeyStatement,
} from "../auth/api-keys";
import { forgetSessionsOfKey } from "../auth/browser-sessions";
import { requireScope } from "../auth/middleware";
import { isOperatorUser } from "../auth/users";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import { forgetUnbounded } from "../metering/meter";
import { BudgetLimits, type BudgetUse } from "../metering/org-meter";
import { USAGE_GROUPS, usageSums } from "../metering/usage-records";
import { SCOPES } from "../principal";
import { quoted } from "../quote";
import { randomToken } from "../secret-text";
import { isOperator, mayGrant, usageOrg } from "../tenancy/roles";
import { typedName } from "../typed-name";
import { changeRow, recordChange } from "./record-change";

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };

const KeyId = z.object({ id: z.string().min(1).max(200) });

const Scopes = z
  .array(z.enum(SCOPES, { error: `must be one of: ${SCOPES.join(", ")}` }))
  .min(1, "must name at least one scope")
  .transform((scopes) => [...new Set(scopes)]);

const ExpiresAt = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z" })
  .refine((at) => Date.parse(at) > Date.now(), "must be in the future")
  .transform((at) => new Date(at).toISOString());

const Budget = BudgetLimits.meta({
  description:
    "Limits of tokens per UTC day and month, and of US dollars per month (from the routes' prices); null: none.",
});

const NewKeyBody = z.strictObject({
  /** Operators: the org the key is of (another org's first admin key, say); your own org when absent. */
  org: z.string().trim().min(1, "must not be empty").max(200).optional(),
  name: z.string().trim().min(1, "must not be empty").max(100).superRefine(typedName),
  /** The user the key acts for; the admin's own user when absent. */
  user: z.string().trim().min(1, "must not be empty").max(200).optional(),
  scopes: Scopes.default(["chat"]),
  expiresAt: ExpiresAt.nullable().default(null),
  budget: Budget.optional(),
});

const KeyChangeBody = z
  .strictObject({
    name: z.string().trim().min(1, "must not be empty").max(100).superRefine(typedName).optional(),
    scopes: Scopes.optional(),
    expiresAt: ExpiresAt.nullable().optional(),
    budget: Budget.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, "name at least one of name, scopes, expiresAt, budget");

const BudgetUseView = z.object({
  limits: BudgetLimits,
  day: z.object({ period: z.string(), tokens: z.number(), costMicros: z.number() }),
  month: z.object({ period: z.string(), tokens: z.number(), costMicros: z.number() }),
  reserved: z.object({ tokens: z.number(), costMicros: z.number() }),
});

const KeyView = z.object({
  id: z.string(),
  name: z.string(),
  user: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  expired: z.boolean(),
  budget: BudgetUseView,
});
type KeyView = z.infer<typeof KeyView>;

function meterOf(c: AppContext, org: string = c.get("principal").org) {
  return c.env.ORG_METER.get(c.env.ORG_METER.idFromName(org));
}

/** Sets the org's limits (keyId null) or a key's; this isolate's calls of the org ask the meter again at once. */
async function setLimits(c: AppContext, keyId: string | null, limits: BudgetLimits, org = c.get("principal").org) {
  await meterOf(c, org).setLimits(keyId, limits);
  forgetUnbounded(org);
}

/** The scopes asked for a key must not be more than the caller holds (only an operator makes an operator). */
function checkGrantable(c: AppContext, scopes: readonly string[] | undefined): void {
  if (scopes && !mayGrant(c.get("principal").scopes, scopes)) {
    throw new ApiError("insufficient_scope", "Only an operator gives a key the 'operator' scope.");
  }
}

/** An operator's key is changed or revoked by an operator only. */
function checkChangeable(c: AppContext, key: KeyView): void {
  if (key.scopes.includes("operator") && !isOperator(c.get("principal"))) {
    throw new ApiError("insufficient_scope", "Only an operator changes or revokes an operator's key.");
  }
}

/** The live keys of `org` (the caller's; never another org's but an operator's new key's), with their budget use. */
async function keyViews(c: AppContext, onlyId?: string, org = c.get("principal").org): Promise<KeyView[]> {
  const keys = await liveKeys(c.get("db"), org, onlyId);
  const status = await meterOf(c, org).status(keys.map((k) => k.id));
  const now = Date.now();
  return keys.map((k) => ({
    ...k,
    expired: k.expiresAt !== null && Date.parse(k.expiresAt) <= now,
    budget: status.keys[k.id] as BudgetUse,
  }));
}

async function keyView(c: AppContext, id: string, org = c.get("principal").org): Promise<KeyView> {
  const [view] = await keyViews(c, id, org);
  if (!view) throw new ApiError("api_key_not_found", `API key ${quoted(id)} not found in your organization.`);
  return view;
}

const UsageQuery = z.object({
  from: z.iso.date({ error: "must be a date, YYYY-MM-DD" }).optional(),
  to: z.iso.date({ error: "must be a date, YYYY-MM-DD" }).optional(),
  groupBy: z.enum(USAGE_GROUPS, { error: `must be one of: ${USAGE_GROUPS.join(", ")}` }).default("day"),
  /** A second grouping, for a chart's series (tokens per day by model). */
  by: z.enum(USAGE_GROUPS, { error: `must be one of: ${USAGE_GROUPS.join(", ")}` }).optional(),
  format: z.enum(["json", "csv"], { error: "must be json or csv" }).optional(),
  /** Operators: another org's usage. */
  org: z.string().min(1).max(200).optional(),
});

const UsageRow = z.object({
  group: z.string(),
  series: z.string().nullable(),
  calls: z.number(),
  /** Every input token, those read from and written to the provider's prompt cache included. */
  promptTokens: z.number(),
  /** Of `promptTokens`, read from the provider's prompt cache. */
  cachedInputTokens: z.number(),
  /** Of `promptTokens`, written to the provider's prompt cache. */
  cacheWriteInputTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  costUsd: z.number(),
  errors: z.number(),
  partial: z.number(),
  latencyMsAvg: z.number(),
});
type UsageRow = z.infer<typeof UsageRow>;

const CSV_COLUMNS: (keyof UsageRow)[] = [
  "group",
  "series",
  "calls",
  "promptTokens",
  "cachedInputTokens",
  "cacheWriteInputTokens",
  "completionTokens",
  "totalTokens",
  "costUsd",
  "errors",
  "partial",
  "latencyMsAvg",
];

function csvCell(value: unknown): string {
  const text = value === null || value === undefined ? "" : String(value);
  // A cell that a spreadsheet would run as a formula is quoted as text.
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const adminKeyRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/keys",
      summary: "The live keys of your organization, newest first, each with its budget use",
      ...admin,
      responses: { 200: json(z.object({ keys: z.array(KeyView) }), "The keys."), ...errors(401, 403) },
    }),
    async (c) => c.json({ keys: await keyViews(c) }, 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/admin/keys",
      summary: "A new key of your organization; its secret is in this answer only",
      ...admin,
      request: jsonBody(NewKeyBody, "The key."),
      responses: {
        201: json(z.object({ key: KeyView, secret: z.string() }), "Created; `secret` is shown once."),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      checkGrantable(c, body.scopes);
      if (body.org !== undefined && body.org !== c.get("principal").org && !isOperator(c.get("principal"))) {
        throw new ApiError("insufficient_scope", "Only an operator makes a key of another organization.");
      }
      const { user } = c.get("principal");
      const org = body.org ?? c.get("principal").org;
      // A key acts as its user: an admin makes none that acts as an operator (its grants, its sessions, its name).
      if (body.user && !isOperator(c.get("principal")) && (await isOperatorUser(c.get("db"), org, body.user))) {
        throw new ApiError("insufficient_scope", "Only an operator makes a key that acts as an operator.");
      }
      const id = `key_${crypto.randomUUID().replace(/-/g, "").slice(0, 20)}`;
      const secret = randomToken("ak_");
      const keyUser = body.user ?? (org === c.get("principal").org ? user : "admin");
      const made = { id, name: body.name, user: keyUser, scopes: body.scopes, expiresAt: body.expiresAt };
      await c
        .get("db")
        .batch([
          insertKeyStatement(c.get("db"), { ...made, org, keyHash: await hashApiKey(secret) }),
          changeRow(c, { org, action: "key.create", target: id, after: { ...made, budget: body.budget ?? null } }),
        ]);
      if (body.budget) await setLimits(c, id, body.budget, org);
      const key = await keyView(c, id, org);
      c.get("logger").addCustomEvent("Message", "[admin_keys_create]", "API key created.", [["key", id]]);
      return c.json({ key, secret }, 201);
    },
  )
  .openapi(
    createRoute({
      method: "patch",
      path: "/admin/keys/{id}",
      summary: "Changes a key's name, scopes, expiry or budget",
      ...admin,
      request: { params: KeyId, ...jsonBody(KeyChangeBody, "What changes.") },
      responses: { 200: json(z.object({ key: KeyView }), "Changed."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json");
      const before = await keyView(c, id);
      checkChangeable(c, before);
      checkGrantable(c, body.scopes);
      const after = { ...before, ...body };
      const audit = changeRow(c, { org: c.get("principal").org, action: "key.change", target: id, before, after });
      const update = changeKeyStatement(c.get("db"), c.get("principal").org, id, body);
      await c.get("db").batch(update ? [update, audit] : [audit]);
      forgetApiKey(id);
      forgetSessionsOfKey(id);
      if (body.budget) await setLimits(c, id, body.budget);
      return c.json({ key: await keyView(c, id) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/keys/{id}",
      summary: "Revokes a key of your organization",
      ...admin,
      request: { params: KeyId },
      responses: { 204: { description: "Revoked." }, ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const [before] = await keyViews(c, id);
      if (!before) throw new ApiError("api_key_not_found", `API key ${quoted(id)} not found in your organization.`);
      checkChangeable(c, before);
      await c
        .get("db")
        .batch([
          revokeKeyStatement(c.get("db"), c.get("principal").org, id),
          changeRow(c, { org: c.get("principal").org, action: "key.revoke", target: id, before }),
        ]);
      forgetApiKey(id);
      forgetSessionsOfKey(id);
      c.get("logger").addCustomEvent("Message", "[admin_keys_revoke]", "API key revoked.", [["key", id]]);
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/budget",
      summary: "Your organization's budget: its limits, what it spent today and this month, what is reserved now",
      ...admin,
      responses: { 200: json(z.object({ budget: BudgetUseView }), "The budget."), ...errors(401, 403) },
    }),
    async (c) => c.json({ budget: (await meterOf(c).status()).org }, 200),
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/budget",
      summary: "Sets your organization's limits (null: none)",
      ...admin,
      request: jsonBody(Budget, "The limits."),
      responses: { 200: json(z.object({ budget: BudgetUseView }), "Set."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const before = (await meterOf(c).status()).org.limits;
      await setLimits(c, null, c.req.valid("json"));
      const budget = (await meterOf(c).status()).org;
      await recordChange(c, {
        org: c.get("principal").org,
        action: "budget.put",
        target: "org",
        before,
        after: budget.limits,
      });
      c.get("logger").addCustomEvent("Message", "[admin_budget_put]", "Organization budget set.");
      return c.json({ budget }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/usage",
      summary:
        "Your organization's model calls (an operator's: any org's), summed by day, key, user, model, mode or route (JSON, or CSV)",
      ...admin,
      request: { query: UsageQuery },
      responses: {
        200: {
          content: {
            "application/json": {
              schema: z.object({ from: z.string(), to: z.string(), groupBy: z.string(), rows: z.array(UsageRow) }),
            },
            "text/csv": { schema: z.string() },
          },
          description: "The sums; `Accept: text/csv` or `format=csv` for CSV.",
        },
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const query = c.req.valid("query");
      const org = usageOrg(c.get("principal"), query.org);
      if (org === null)
        throw new ApiError("insufficient_scope", "Only an operator reads another organization's usage.");
      const today = new Date().toISOString().slice(0, 10);
      const to = query.to ?? today;
      const from = query.from ?? new Date(Date.parse(to) - 29 * 86_400_000).toISOString().slice(0, 10);
      if (from > to)
        throw new ApiError("invalid_request", "Invalid 'from': it must not be after 'to'.", { param: "from" });
      const rows: UsageRow[] = await usageSums(
        c.get("db"),
        org,
        { from, until: new Date(Date.parse(to) + 86_400_000).toISOString().slice(0, 10) },
        query.groupBy,
        query.by,
      );
      const csv =
        query.format === "csv" || (query.format === undefined && (c.req.header("accept") ?? "").includes("text/csv"));
      if (csv) {
        const lines = [CSV_COLUMNS.join(","), ...rows.map((r) => CSV_COLUMNS.map((k) => csvCell(r[k])).join(","))];
        return c.body(`${lines.join("\r\n")}\r\n`, 200, {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="usage-${query.groupBy}-${from}-${to}.csv"`,
        });
      }
      return c.json({ from, to, groupBy: query.groupBy, rows }, 200);
    },
  );

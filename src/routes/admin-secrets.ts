// /admin/secrets (admin scope): an org's provider keys, which its own model routes and MCP servers name. Stored
// encrypted (src/tenancy/secret-box.ts), write-only: a list shows names, the last four characters and dates, never
// a value; a change takes effect for the org's next calls at once in this isolate (within MODEL_ROUTES_CACHE_MS
// elsewhere). An operator wraps every org's data keys again after rotating SECRETS_KEY. Every change is in the
// audit log, by name.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import { serversNamingSecretStatement } from "../mcp/mcp-server-registry";
import { quoted } from "../quote";
import { routesNamingSecretStatement } from "../routing/model-route-store";
import { forgetRouteTable } from "../routing/route-table";
import { SecretName } from "../secret-name";
import {
  lastFourOf,
  MAX_SECRET_VALUE_CHARS,
  OrgSecrets,
  OrgSecretView,
  requireSecretBox,
  rewrapAll,
} from "../tenancy/org-secrets";
import { changeRow, recordChange } from "./record-change";

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };

const SecretParams = z.object({ name: SecretName });

const SecretBody = z.strictObject({
  value: z
    .string()
    .min(1, "must not be empty")
    .max(MAX_SECRET_VALUE_CHARS, `must be at most ${MAX_SECRET_VALUE_CHARS} characters`)
    .refine((value) => value.trim() === value, "must not start or end with whitespace")
    .describe("The provider key. Stored encrypted; never shown again."),
});

const secretAnswer = (description: string) => json(z.object({ secret: OrgSecretView }), description);

/** Who may use a secret now: the org's routes and MCP servers that name it. */
async function usersOf(c: AppContext, name: string): Promise<string[]> {
  const db = c.get("db");
  const { org } = c.get("principal");
  // One round trip: each table's own query, batched.
  const answers = await db.batch<{ user: string }>([
    routesNamingSecretStatement(db, org, name),
    serversNamingSecretStatement(db, org, name),
  ]);
  return answers.flatMap(({ results }) => results.map((r) => r.user));
}

export const adminSecretRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/secrets",
      summary: "Your organization's provider keys: names, last four characters and dates (never a value)",
      ...admin,
      responses: { 200: json(z.object({ secrets: z.array(OrgSecretView) }), "The secrets."), ...errors(401, 403) },
    }),
    async (c) => c.json({ secrets: await new OrgSecrets(c.get("db"), c.get("principal").org).list() }, 200),
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/secrets/{name}",
      summary: "Stores (201) or replaces (200) a provider key of your organization, encrypted; write-only",
      ...admin,
      request: { params: SecretParams, ...jsonBody(SecretBody, "The value.") },
      responses: { 200: secretAnswer("Replaced."), 201: secretAnswer("Stored."), ...errors(400, 401, 403, 500) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const { value } = c.req.valid("json");
      const box = await requireSecretBox(c.env);
      const store = new OrgSecrets(c.get("db"), c.get("principal").org);
      const before = await store.get(name);
      const after = { name, lastFour: lastFourOf(value) };
      const audit = changeRow(c, { org: c.get("principal").org, action: "secret.put", target: name, before, after });
      const { secret, created } = await store.put(box, name, value, [audit]);
      forgetRouteTable(c.env.DB);
      c.get("logger").addCustomEvent(
        "Message",
        "[admin_secrets_put]",
        created ? "Secret stored." : "Secret replaced.",
        [["secret", name]],
      );
      return created ? c.json({ secret }, 201) : c.json({ secret }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/secrets/{name}",
      summary: "Removes a provider key of your organization that none of its routes or MCP servers names",
      ...admin,
      request: { params: SecretParams },
      responses: { 204: { description: "Removed." }, ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const store = new OrgSecrets(c.get("db"), c.get("principal").org);
      const before = await store.get(name);
      if (!before) throw new ApiError("secret_not_found", `Secret ${quoted(name)} not found in your organization.`);
      const users = await usersOf(c, name);
      if (users.length > 0) {
        throw new ApiError(
          "secret_in_use",
          `Secret ${quoted(name)} is named by the ${users.join(", ")}; name another there first.`,
        );
      }
      await store.delete(name, [
        changeRow(c, { org: c.get("principal").org, action: "secret.delete", target: name, before }),
      ]);
      forgetRouteTable(c.env.DB);
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/admin/secrets/rewrap",
      summary:
        "Operators: wraps every organization's data keys again with SECRETS_KEY, after a rotation (the old key as SECRETS_KEY_PREVIOUS)",
      ...admin,
      middleware: [requireScope("operator")],
      responses: {
        200: json(
          z.object({ rewrapped: z.number().int(), current: z.number().int(), unopened: z.array(z.string()) }),
          "How many were wrapped again, how many already were, and the rows (org/name) neither key opens.",
        ),
        ...errors(401, 403, 500),
      },
    }),
    async (c) => {
      const result = await rewrapAll(c.get("db"), await requireSecretBox(c.env));
      await recordChange(c, {
        org: null,
        action: "secrets.rewrap",
        target: "*",
        after: result,
      });
      forgetRouteTable(c.env.DB);
      return c.json(result, 200);
    },
  );

// /context/grants: the MCP clients the caller allowed to act for them (OAuth for /mcp), and revoking one: its
// access ends at once in this isolate and within AUTH_CACHE_TTL_MS everywhere (aptix's record is checked on every
// request a token of it makes, and at refresh), and the authorization server's own records of it are deleted after
// the answer.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { forgetGrantsInAuthorizationServer, standingGrants } from "../auth/oauth";
import { GrantView, revokeGrants } from "../auth/oauth-grants";
import { ApiError } from "../errors";
import { BEARER, errors, json, routes } from "../http";
import { quoted } from "../quote";
import { recordChange } from "./record-change";

const tags = ["auth"];

export const grantRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/context/grants",
      summary: "The MCP clients you allowed to act for you (OAuth grants), newest first",
      tags,
      security: BEARER,
      responses: { 200: json(z.object({ grants: z.array(GrantView) }), "Your grants."), ...errors(401, 403) },
    }),
    async (c) => {
      const { org, user } = c.get("principal");
      return c.json({ grants: await standingGrants(c.env, c.get("db"), new URL(c.req.url), org, user) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/context/grants/{id}",
      summary: "Revokes one of your grants: its client's tokens stop working at once",
      tags,
      security: BEARER,
      request: { params: z.object({ id: z.string().min(1).max(200) }) },
      responses: { 204: { description: "Revoked." }, ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { org, user } = c.get("principal");
      const revoked = await revokeGrants(c.get("db"), org, user, id);
      if (revoked.length === 0) throw new ApiError("grant_not_found", `Grant ${quoted(id)} not found among yours.`);
      const kvGrantIds = revoked.map((grant) => grant.kvGrantId);
      c.executionCtx.waitUntil(forgetGrantsInAuthorizationServer(c.env, new URL(c.req.url), org, user, kvGrantIds));
      await recordChange(c, {
        org,
        action: "grant.revoke",
        target: id,
        before: revoked.map(({ kvGrantId: _, ...grant }) => grant),
      });
      c.get("logger").addCustomEvent("Message", "[oauth_grant_revoke]", "An OAuth grant was revoked.", [["grant", id]]);
      return c.body(null, 204);
    },
  );

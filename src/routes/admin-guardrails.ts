// /admin/guardrails: the org's guardrails (docs/guardrails.md), the default every mode of the org runs under its own,
// and the switch that applies their input and output entries to the /v1 passthrough; with the counters of what
// fired. Each change is audited (`guardrails.put`); this isolate forgets its copy at once, others within
// MODES_CACHE_MS.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { GuardrailSpec, parseGuardrails } from "../guardrails/guardrail-config";
import { GuardrailCount, guardrailCounts } from "../guardrails/guardrail-counts";
import { forgetOrgGuardrails, orgGuardrailsStatement, readOrgGuardrails } from "../guardrails/guardrail-policy";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { changeRow } from "./record-change";

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };

const OrgGuardrailsBody = z.strictObject({
  /** Checked by parseGuardrails (400 `invalid_guardrail` naming `guardrails[i].field`). */
  guardrails: z.array(z.unknown()).meta({ description: "Guardrail entries (the Guardrail schema)." }),
  passthrough: z.boolean({ error: "must be true or false" }).default(false),
});

const OrgGuardrailsAnswer = z.object({
  guardrails: z.array(GuardrailSpec.extend({ name: z.string() })),
  passthrough: z.boolean(),
  /** What fired, per guardrail, point and action (most recent first). */
  counts: z.array(GuardrailCount),
});

export const adminGuardrailRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/guardrails",
      summary: "Your organization's guardrails, whether the passthrough applies them, and how often each fired",
      ...admin,
      responses: { 200: json(OrgGuardrailsAnswer, "The guardrails and their counters."), ...errors(401, 403) },
    }),
    async (c) => {
      const { org } = c.get("principal");
      // Read from D1, not the isolate's copy: the admin sees what they last set.
      const [own, counts] = await Promise.all([readOrgGuardrails(c.get("db"), org), guardrailCounts(c.get("db"), org)]);
      return c.json({ guardrails: own.guardrails, passthrough: own.passthrough, counts }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/guardrails",
      summary: "Sets your organization's guardrails (every mode's default) and whether the passthrough applies them",
      ...admin,
      request: jsonBody(OrgGuardrailsBody, "The whole list and the passthrough switch."),
      responses: { 200: json(OrgGuardrailsAnswer, "The guardrails as they now are."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const parsed = parseGuardrails(body.guardrails, "guardrails");
      if (!parsed.ok) throw ApiError.from(parsed);
      const { org } = c.get("principal");
      const before = await readOrgGuardrails(c.get("db"), org);
      const after = { guardrails: parsed.value, passthrough: body.passthrough };
      await c.get("db").batch([
        orgGuardrailsStatement(c.get("db"), org, after.guardrails, after.passthrough),
        changeRow(c, {
          org,
          action: "guardrails.put",
          target: "guardrails",
          before: before.updatedAt === null ? null : { guardrails: before.guardrails, passthrough: before.passthrough },
          after,
        }),
      ]);
      forgetOrgGuardrails(c.env.DB);
      c.get("logger").addCustomEvent("Message", "[admin_guardrails_put]", "Guardrails set.", [
        ["guardrails", String(after.guardrails.length)],
        ["passthrough", String(after.passthrough)],
      ]);
      return c.json({ ...after, counts: await guardrailCounts(c.get("db"), org) }, 200);
    },
  );

// /admin/memory: the org's memory switch (docs/memory.md). Off: no memory tool is offered or works, the prompt
// carries no memories, and nothing is stored; the memories kept stay readable and deletable by their people. Each
// change is audited; this isolate forgets its copy of the switch at once, others within MODES_CACHE_MS.
import { createRoute } from "@hono/zod-openapi";
import { requireScope } from "../auth/middleware";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { forgetOrgMemoryPolicy, orgMemoryEnabled, orgMemoryStatement } from "../memory/memory-policy";
import { notifyMemoryChange } from "../session/memory-notify";
import { MemoryPolicy } from "../wire/memory";
import { changeRow } from "./record-change";

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };

export const adminMemoryRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/memory",
      summary: "Whether memory is on for your organization",
      ...admin,
      responses: { 200: json(MemoryPolicy, "The switch."), ...errors(401, 403) },
    }),
    async (c) => {
      // Read from D1, not the isolate's copy: the admin sees what they last set.
      forgetOrgMemoryPolicy(c.env.DB);
      return c.json({ enabled: await orgMemoryEnabled(c.env, c.get("db"), c.get("principal").org) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/memory",
      summary: "Turns memory on or off for your organization",
      ...admin,
      request: jsonBody(MemoryPolicy, "The switch."),
      responses: { 200: json(MemoryPolicy, "The switch as it now is."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { enabled } = c.req.valid("json");
      const { org } = c.get("principal");
      forgetOrgMemoryPolicy(c.env.DB);
      const before = { enabled: await orgMemoryEnabled(c.env, c.get("db"), org) };
      await c
        .get("db")
        .batch([
          orgMemoryStatement(c.get("db"), org, enabled),
          changeRow(c, { org, action: "memory.put", target: "memory", before, after: { enabled } }),
        ]);
      forgetOrgMemoryPolicy(c.env.DB);
      // The org's live sessions drop their copies (the admin's own before this answer, the others' just after it):
      // switched off, none is refilled (other isolates still keep the switch itself for MODES_CACHE_MS, as before).
      await notifyMemoryChange(c.env, c.get("db"), org, null, c.get("logger"), {
        actor: { user: c.get("principal").user, waitUntil: (work) => c.executionCtx.waitUntil(work) },
      });
      return c.json({ enabled }, 200);
    },
  );

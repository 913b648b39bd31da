// Workflows: the list (GET /workflows), its categories, and running one in a session.

import { Hono } from "hono";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppBindings, readJsonBody } from "../http";
import { quoted } from "../quote";
import { callerOf, sessionStub, unwrap } from "../session/session-client";
import { workflowService } from "../workflows";

const RunWorkflowBody = z
  .strictObject({
    // Kept as sent (z.record would drop an own `__proto__` key): the workflow's schema judges every key.
    parameters: z
      .custom<Record<string, unknown>>(
        (value) => typeof value === "object" && value !== null && !Array.isArray(value),
        "must be an object",
      )
      .optional(),
    input: z.string().max(10_000).optional(),
  })
  .refine((b) => (b.parameters === undefined) !== (b.input === undefined), {
    error: "needs exactly one of 'parameters' (an object) and 'input' (the user's words)",
  });

export const workflowRoutes = new Hono<AppBindings>()
  .get("/workflows", requireScope("chat"), (c) => c.json({ workflows: workflowService.list() }))
  .get("/workflows/categories", requireScope("chat"), (c) => {
    const workflows = workflowService.list();
    const categories = workflowService.categories.list().map((category) => ({
      ...category,
      workflows: workflows.filter((w) => w.category === category.id),
    }));
    return c.json({ categories });
  })
  .post("/context/sessions/:sessionId/workflows/:workflowId", requireScope("chat"), async (c) => {
    const stub = sessionStub(c.env, c.req.param("sessionId"));
    const workflow = workflowService.get(c.req.param("workflowId"));
    if (!workflow)
      throw ApiError.notFound(`Workflow ${quoted(c.req.param("workflowId"))} not found.`, "workflow_not_found");
    const parsed = workflowService.parse(workflow, await readJsonBody(c, RunWorkflowBody));
    if (!parsed.ok) throw ApiError.badRequest(parsed.message, parsed.param, "invalid_workflow_parameters");
    return c.json(unwrap(await stub.runWorkflow(callerOf(c), workflow.id, parsed.parameters)));
  });

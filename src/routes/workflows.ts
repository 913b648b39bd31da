// Workflows: the list (GET /workflows), its categories, and running one in a session. The parameters are
// parsed here, once (the session object runs the workflow with them as they are).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { workflowNotFound } from "../refusal";
import { callerOf, sessionStub, unwrap } from "../session/session-client";
import { WorkflowRunResponse } from "../wire/session";
import { workflowService } from "../workflows";

const RunWorkflowBody = z
  .strictObject({
    // Kept as sent (z.record would drop an own `__proto__` key): the workflow's schema judges every key.
    parameters: z
      .custom<Record<string, unknown>>(
        (value) => typeof value === "object" && value !== null && !Array.isArray(value),
        "must be an object",
      )
      .optional()
      .meta({ type: "object", description: "The parameters, by name (the workflow's JSON schema)." }),
    input: z
      .string()
      .max(10_000)
      .optional()
      .meta({ description: "The user's own words: a first word and key=value pairs." }),
  })
  .refine((b) => (b.parameters === undefined) !== (b.input === undefined), {
    error: "needs exactly one of 'parameters' (an object) and 'input' (the user's words)",
  });

const WorkflowDescription = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});
const Category = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  order: z.number(),
  workflows: z.array(WorkflowDescription),
});
const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["workflows"] };

export const workflowRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/workflows",
      summary: "The workflows a user can invoke, with their parameter schemas",
      ...chat,
      responses: {
        200: json(z.object({ workflows: z.array(WorkflowDescription) }), "The workflows."),
        ...errors(401, 403),
      },
    }),
    (c) => c.json({ workflows: workflowService.list() }, 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/workflows/categories",
      summary: "The workflow categories in display order, each with its workflows",
      ...chat,
      responses: { 200: json(z.object({ categories: z.array(Category) }), "The categories."), ...errors(401, 403) },
    }),
    (c) => {
      const workflows = workflowService.list();
      const categories = workflowService.categories.list().map((category) => ({
        ...category,
        workflows: workflows.filter((w) => w.category === category.id),
      }));
      return c.json({ categories }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions/{sessionId}/workflows/{workflowId}",
      summary: "Runs a workflow in the session, under the one-turn-at-a-time rule",
      ...chat,
      request: {
        params: z.object({ sessionId: z.string(), workflowId: z.string() }),
        ...jsonBody(RunWorkflowBody, "The parameters, or the user's words to take them from."),
      },
      responses: { 200: json(WorkflowRunResponse, "What the workflow did."), ...errors(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const { sessionId, workflowId } = c.req.valid("param");
      const stub = sessionStub(c.env, sessionId);
      const workflow = workflowService.get(workflowId);
      if (!workflow) throw ApiError.from(workflowNotFound(workflowId));
      const parsed = workflowService.parse(workflow, c.req.valid("json"));
      if (!parsed.ok) throw new ApiError("invalid_workflow_parameters", parsed.message, { param: parsed.param });
      return c.json(unwrap(await stub.runWorkflow(callerOf(c), workflow.id, parsed.parameters)), 200);
    },
  );

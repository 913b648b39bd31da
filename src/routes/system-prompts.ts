// GET /v1/system-prompts/:id/enhanced?mode=KEY: the prompt our context endpoints send the caller, with its tools (and
// what the agent knows about the caller, as a turn of theirs shows it: with no message, the pinned and the newest).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { enhanceForMode } from "../agent/model-step";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, routes } from "../http";
import { McpToolSource } from "../mcp/mcp-tool-source";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { getSystemPrompt } from "../prompts/system-prompt-store";
import { quoted } from "../quote";
import { envRouteTable } from "../routing/env-router";
import { ownerMemoryRecall } from "../session/memory-recall";
import { DurableObjectSessionManager } from "../session/session-client";
import { settings } from "../settings";
import { createAgentToolRegistry } from "../tools";

const EnhancedPrompt = z.object({
  id: z.string(),
  mode: z.string(),
  prompt: z.string(),
  tools: z.array(z.string()),
  omittedTools: z.array(z.string()),
  estimatedTokens: z.number().int(),
});

export const systemPromptRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/v1/system-prompts/{id}/enhanced",
    tags: ["prompts"],
    summary: "The enhanced system prompt a session in a mode gets, with its tools and budget",
    security: BEARER,
    middleware: [requireScope("chat")] as const,
    request: {
      params: z.object({ id: z.string().min(1) }),
      query: z.object({ mode: z.string().min(1).optional() }),
    },
    responses: { 200: json(EnhancedPrompt, "The prompt."), ...errors(401, 403, 404, 500) },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const modeKey = c.req.valid("query").mode;
    const catalog = new D1AgentModeCatalogService(c.get("db"), c.get("principal").org);
    const [base, mode] = await Promise.all([
      getSystemPrompt(c.get("db"), id),
      modeKey ? catalog.getMode(modeKey) : catalog.getDefaultMode(),
    ]);
    if (!base) throw new ApiError("system_prompt_not_found", `System prompt ${quoted(id)} not found.`);
    if (!mode) throw new ApiError("mode_not_found", `Mode ${quoted(modeKey ?? "")} not found.`);
    const { agent, workspace, mcp } = settings(c.env);
    // The prompt as the mode's route gets it: its tool format decides whether the JSON call format is described.
    const route = (await envRouteTable(c.env, c.get("principal").org, c.get("logger"))).chain(mode.modelRoute)[0];
    const registry = createAgentToolRegistry({
      logger: c.get("logger"),
      sessionManager: new DurableObjectSessionManager(c.env),
      catalog,
      workspace,
    });
    const mcpTools = new McpToolSource(c.get("db"), c.env, c.get("principal").org, c.get("logger"), mcp.discoveryTtlMs);
    const { enhanced } = await enhanceForMode({
      basePrompt: base.content,
      mode,
      registry,
      remoteTools: (names, builtIn) => mcpTools.forTools(names, builtIn),
      format: route?.toolFormat ?? "native",
      config: agent,
      memory: ownerMemoryRecall(c.env, c.get("db"), () => c.get("principal"), c.get("logger")),
    }).finally(() => mcpTools.closeConnections());
    return c.json(
      {
        id: base.id,
        mode: mode.key,
        prompt: enhanced.prompt,
        tools: enhanced.tools.map((t) => t.name),
        omittedTools: enhanced.omittedTools,
        estimatedTokens: enhanced.estimatedTokens,
      },
      200,
    );
  },
);

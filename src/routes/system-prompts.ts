// GET /v1/system-prompts/:id/enhanced?mode=KEY: the prompt our context endpoints send, with its tools.

import { Hono } from "hono";
import { agentConfigFromEnv } from "../agent/agent-config";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import type { AppBindings } from "../http";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { enhanceSystemPrompt } from "../prompts/system-prompt-enhancer";
import { getSystemPrompt } from "../prompts/system-prompt-store";
import { quoted } from "../quote";
import { DurableObjectSessionManager } from "../session/session-client";
import { createAgentToolRegistry } from "../tools";

export const systemPromptRoutes = new Hono<AppBindings>().get(
  "/v1/system-prompts/:id/enhanced",
  requireScope("chat"),
  async (c) => {
    const id = c.req.param("id");
    const catalog = new D1AgentModeCatalogService(c.env.DB);
    const modeKey = c.req.query("mode");
    const [base, mode] = await Promise.all([
      getSystemPrompt(c.env.DB, id),
      modeKey ? catalog.getMode(modeKey) : catalog.getDefaultMode(),
    ]);
    if (!base) throw ApiError.notFound(`System prompt ${quoted(id)} not found.`, "system_prompt_not_found");
    if (!mode) throw ApiError.notFound(`Mode ${quoted(modeKey ?? "")} not found.`, "mode_not_found");
    const config = agentConfigFromEnv(c.env);
    const registry = createAgentToolRegistry({
      logger: c.var.logger,
      sessionManager: new DurableObjectSessionManager(c.env),
      catalog,
    });
    const enhanced = enhanceSystemPrompt({
      basePrompt: base.content,
      mode,
      registeredTools: registry.tools,
      format: config.toolFormat,
      budgetTokens: config.promptBudgetTokens,
    });
    return c.json({
      id: base.id,
      mode: mode.key,
      prompt: enhanced.prompt,
      tools: enhanced.tools.map((t) => t.name),
      omittedTools: enhanced.omittedTools,
      estimatedTokens: enhanced.estimatedTokens,
    });
  },
);

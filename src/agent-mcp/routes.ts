// /mcp: the agent as an MCP server over Streamable HTTP (scope `chat`, the Bearer key of every route). Each
// request gets its own server and transport (stateless: no MCP session to keep between requests; the agent's
// sessions are Durable Objects), answered as JSON.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { type AppBindings, type AppContext, BEARER, errors, routes } from "../http";
import { callerOf } from "../session/session-client";
import { agentMcpServer } from "./server";

async function serve(c: AppContext): Promise<Response> {
  const server = agentMcpServer(c.env, callerOf(c));
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw);
  } finally {
    c.executionCtx.waitUntil(server.close());
  }
}

/** The MCP endpoint in /openapi.json (declared for the document: the SDK's transport reads the body itself). */
function describe(app: OpenAPIHono<AppBindings>): OpenAPIHono<AppBindings> {
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/mcp",
    tags: ["mcp"],
    security: BEARER,
    summary:
      "The agent as an MCP server (Streamable HTTP, JSON-RPC): tools list_modes, start_session, send_message, decide_approvals, submit_tool_results; resources aptix://sessions/{id}",
    request: {
      body: {
        content: { "application/json": { schema: z.looseObject({ jsonrpc: z.literal("2.0"), method: z.string() }) } },
        required: true,
        description: "A JSON-RPC message of the Model Context Protocol.",
      },
    },
    responses: {
      200: { description: "The JSON-RPC answer." },
      202: { description: "A notification, taken." },
      ...errors(400, 401, 403),
    },
  });
  return app;
}

export const agentMcpRoutes = describe(routes()).on(["GET", "POST", "DELETE"], "/mcp", requireScope("chat"), serve);

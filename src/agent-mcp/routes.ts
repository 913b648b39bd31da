// /mcp: the agent as an MCP server over Streamable HTTP (scope `chat`, the Bearer key of every route). Each
// request gets its own server and transport (stateless: no MCP session to keep between requests; the agent's
// sessions are Durable Objects), answered as JSON. So there is no stream to open with GET (nothing could ever
// be sent on it) and no MCP session to end with DELETE: both are 405, as the transport spec allows.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppBindings, type AppContext, BEARER, errors, routes } from "../http";
import { callerOf, hintOf } from "../session/session-client";
import { agentMcpServer } from "./server";

async function serve(c: AppContext): Promise<Response> {
  const server = agentMcpServer(c.env, callerOf(c), { db: c.get("db"), locationHint: hintOf(c) });
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
  for (const method of ["get", "delete"] as const) {
    app.openAPIRegistry.registerPath({
      method,
      path: "/mcp",
      tags: ["mcp"],
      security: BEARER,
      summary: "Not offered: the MCP server is stateless (no stream to open, no MCP session to end)",
      responses: errors(401, 403, 405),
    });
  }
  return app;
}

function stateless(): never {
  throw new ApiError(
    "method_not_allowed",
    "This MCP server is stateless and answers POST only: it has no stream to GET and no MCP session to DELETE.",
    { headers: { allow: "POST" } },
  );
}

export const agentMcpRoutes = describe(routes())
  .post("/mcp", requireScope("chat"), serve)
  .on(["GET", "DELETE"], "/mcp", requireScope("chat"), stateless);

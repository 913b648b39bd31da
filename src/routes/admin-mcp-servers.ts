// /admin/mcp-servers: register, list and remove the remote MCP servers whose tools modes may offer (admin scope).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import {
  DEFAULT_MCP_TIMEOUT_MS,
  MAX_MCP_TIMEOUT_MS,
  MCP_APPROVAL_POLICIES,
  MCP_SERVER_NAME_PATTERN,
  McpServerConfig,
  McpServerRegistry,
} from "../mcp/mcp-server-registry";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { parseMcpReference } from "../modes/tool-references";
import { quoted } from "../quote";
import { SecretName } from "../secret-name";
import { settings } from "../settings";
import { typedProse } from "../typed-name";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

const ServerName = z.object({
  name: z
    .string()
    .regex(MCP_SERVER_NAME_PATTERN, "use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter"),
});

const McpServerBody = z.strictObject({
  url: z.url({ error: "must be an absolute URL" }).max(2_000),
  description: z.string().trim().min(1, "must not be empty").max(2_000).superRefine(typedProse),
  // Our own settings and the LLM's key are never sent to an MCP server.
  authSecret: SecretName.nullable().default(null),
  approval: z.enum(MCP_APPROVAL_POLICIES),
  tools: z.array(z.string().min(1).max(128)).max(200).nullable().default(null),
  timeoutMs: z.number().int().min(1).max(MAX_MCP_TIMEOUT_MS).default(DEFAULT_MCP_TIMEOUT_MS),
  category: z
    .string()
    .regex(MCP_SERVER_NAME_PATTERN, "use lowercase letters, digits, '_' or '-', starting with a letter")
    .nullable()
    .default(null),
  enabled: z.boolean().default(true),
});

/** https:, or http: to loopback where the settings allow it (development). */
function checkUrl(url: string, allowHttpLoopback: boolean): void {
  const parsed = new URL(url);
  if (parsed.protocol === "https:") return;
  if (parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname)) {
    if (allowHttpLoopback) return;
    throw new ApiError(
      "invalid_request",
      "Invalid 'url': http: is allowed only to loopback in development (MCP_ALLOW_HTTP_LOOPBACK); use https:.",
      {
        param: "url",
      },
    );
  }
  throw new ApiError(
    "invalid_request",
    "Invalid 'url': an MCP server must be https: (or http: to loopback in development).",
    {
      param: "url",
    },
  );
}

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };
const serverAnswer = (description: string) => json(z.object({ server: McpServerConfig }), description);

export const adminMcpServerRoutes = routes()
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/mcp-servers/{name}",
      summary: "Register (201) or change (200) a remote MCP server",
      ...admin,
      request: { params: ServerName, ...jsonBody(McpServerBody, "The server.") },
      responses: { 200: serverAnswer("Changed."), 201: serverAnswer("Registered."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json");
      checkUrl(body.url, settings(c.env).mcp.allowHttpLoopback);
      const { server, created } = await new McpServerRegistry(c.var.db).put(name, body);
      c.var.logger.addCustomEvent(
        "Message",
        "[admin_mcp_servers_put]",
        created ? "MCP server registered." : "MCP server changed.",
        [["server", name]],
      );
      return created ? c.json({ server }, 201) : c.json({ server }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/mcp-servers",
      summary: "The registered MCP servers, each with its last discovery (when, tools, refusals, error)",
      ...admin,
      responses: { 200: json(z.object({ servers: z.array(McpServerConfig) }), "The servers."), ...errors(401, 403) },
    }),
    async (c) => c.json({ servers: await new McpServerRegistry(c.var.db).list() }, 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/mcp-servers/{name}",
      summary: "Removes a server no mode offers",
      ...admin,
      request: { params: ServerName },
      responses: { 204: { description: "Removed." }, ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const users = (await new D1AgentModeCatalogService(c.var.db).getAllModes())
        .filter((mode) => mode.tools.some((tool) => parseMcpReference(tool)?.server === name))
        .map((mode) => mode.key);
      if (users.length > 0) {
        throw new ApiError(
          "mcp_server_in_use",
          `MCP server ${quoted(name)} is offered by the modes ${users.join(", ")}; take it out of them first.`,
        );
      }
      if (!(await new McpServerRegistry(c.var.db).delete(name))) {
        throw new ApiError("mcp_server_not_found", `MCP server ${quoted(name)} not found.`);
      }
      return c.body(null, 204);
    },
  );

// /admin/mcp-servers: register, list and remove the remote MCP servers whose tools modes may offer (admin scope):
// the deployment's (an operator changes them; every org's modes may offer them) and an org's own (its admins change
// them; its modes get its own instead of the deployment's of a name). A server's token is a Worker secret's name for
// the deployment's, one of the org's own secrets for an org's. Every change is in the audit log.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import type { Db } from "../db";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import {
  DEFAULT_MCP_TIMEOUT_MS,
  MAX_MCP_TIMEOUT_MS,
  MCP_APPROVAL_POLICIES,
  MCP_SERVER_NAME_PATTERN,
  McpServerConfig,
  McpServerRegistry,
  serversSeenBy,
} from "../mcp/mcp-server-registry";
import { modesNamingServer } from "../modes/catalog-service";
import { parseMcpReference } from "../modes/tool-references";
import { quoted } from "../quote";
import { SecretName } from "../secret-name";
import { settings } from "../settings";
import { OrgSecrets } from "../tenancy/org-secrets";
import { type Owner, type OwnerChoice, OwnerQuery, writeOwner } from "../tenancy/ownership";
import { credentialInUrlProblem, namedSecret, upstreamUrlProblem } from "../tenancy/upstream-url";
import { typedProse } from "../typed-name";
import { changeRow } from "./record-change";

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
  const problem =
    credentialInUrlProblem(url, namedSecret("authSecret")) ??
    upstreamUrlProblem(url, allowHttpLoopback, "an MCP server");
  if (problem) throw new ApiError("invalid_request", `Invalid 'url': ${problem}`, { param: "url" });
}

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };
const serverAnswer = (description: string) => json(z.object({ server: McpServerConfig }), description);

/** The server the caller's org uses under `name` (its own, else the deployment's), or null. */
async function seenServer(c: AppContext, name: string): Promise<McpServerConfig | null> {
  return (await serversSeenBy(c.get("db"), c.get("principal").org)).find((s) => s.name === name) ?? null;
}

/** Whose server a write or removal of `name` means (the one the caller sees, unless `asked`); refused when not theirs. */
async function serverOwner(c: AppContext, name: string, asked: OwnerChoice | undefined): Promise<Owner> {
  return writeOwner(c.get("principal"), "MCP server", name, await seenServer(c, name), asked);
}

/** The token a server names must be there: a Worker secret for the deployment's, one of the org's for an org's. */
async function checkAuthSecret(c: AppContext, owner: Owner, secret: string | null): Promise<void> {
  if (secret === null || owner === null) return;
  if (await new OrgSecrets(c.get("db"), owner).get(secret)) return;
  throw new ApiError(
    "invalid_request",
    `Invalid 'authSecret': your organization has no secret named ${quoted(secret)}; store it first (PUT /admin/secrets/${secret}). An organization's server names its own secrets only.`,
    { param: "authSecret" },
  );
}

/**
 * The modes that offer `server`'s tools: its owner's own, and for the deployment's server every org's mode that
 * names it without a server of its own of that name.
 */
async function modesOffering(db: Db, server: McpServerConfig): Promise<string[]> {
  const owner = server.org ?? "";
  const modes = await modesNamingServer(db, server.name, owner);
  return modes
    .filter((m) => m.tools.some((tool) => parseMcpReference(tool)?.server === server.name))
    .map((m) => (m.org === owner ? m.key : `${m.org}/${m.key}`));
}

export const adminMcpServerRoutes = routes()
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/mcp-servers/{name}",
      summary:
        "Register (201) or change (200) a remote MCP server: your organization's own, or (operators) the deployment's",
      ...admin,
      request: { params: ServerName, query: OwnerQuery, ...jsonBody(McpServerBody, "The server.") },
      responses: { 200: serverAnswer("Changed."), 201: serverAnswer("Registered."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json");
      const owner = await serverOwner(c, name, c.req.valid("query").owner);
      checkUrl(body.url, settings(c.env).mcp.allowHttpLoopback);
      await checkAuthSecret(c, owner, body.authSecret);
      const registry = new McpServerRegistry(c.get("db"), owner);
      const before = await registry.get(name);
      const after = { name, org: owner, ...body };
      const audit = changeRow(c, { org: owner, action: "mcp_server.put", target: name, before, after });
      const { server, created } = await registry.put(name, body, [audit]);
      c.get("logger").addCustomEvent(
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
      summary:
        "The MCP servers your organization's modes may offer (the deployment's and its own), each with its last discovery (when, tools, refusals, error)",
      ...admin,
      responses: { 200: json(z.object({ servers: z.array(McpServerConfig) }), "The servers."), ...errors(401, 403) },
    }),
    async (c) => c.json({ servers: await serversSeenBy(c.get("db"), c.get("principal").org) }, 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/mcp-servers/{name}",
      summary: "Removes a server no mode offers (your organization's own, or an operator the deployment's)",
      ...admin,
      request: { params: ServerName, query: OwnerQuery },
      responses: { 204: { description: "Removed." }, ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const owner = await serverOwner(c, name, c.req.valid("query").owner);
      const registry = new McpServerRegistry(c.get("db"), owner);
      const server = await registry.get(name);
      if (!server) throw new ApiError("mcp_server_not_found", `MCP server ${quoted(name)} not found.`);
      const users = await modesOffering(c.get("db"), server);
      if (users.length > 0) {
        throw new ApiError(
          "mcp_server_in_use",
          `MCP server ${quoted(name)} is offered by the modes ${users.join(", ")}; take it out of them first.`,
        );
      }
      await registry.delete(name, [
        changeRow(c, { org: owner, action: "mcp_server.delete", target: name, before: server }),
      ]);
      return c.body(null, 204);
    },
  );

// The MCP server registry in D1: what an operator (the deployment's servers, every org's modes may offer) or an
// org's admin (the org's own) registered, read by sessions to discover tools, with each server's last discovery
// (when, how many tools, which were refused and why, the error).

import { z } from "zod";
import type { Db } from "../db";
import { KEY_NAME_PATTERN } from "../key-name";

export const MCP_APPROVAL_POLICIES = ["always", "never", "unless_read_only"] as const;
export type McpApprovalPolicy = (typeof MCP_APPROVAL_POLICIES)[number];

/** A server's name follows the mode keys' rule: it is part of every tool name derived from it. */
export const MCP_SERVER_NAME_PATTERN = KEY_NAME_PATTERN;
export const MAX_MCP_TIMEOUT_MS = 300_000;
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

export const McpDiscovery = z.object({
  at: z.string(),
  toolCount: z.number().int(),
  /** The tools offered, by their derived names. */
  tools: z.array(z.string()),
  /** Tools the registry refused, each with why (an unusable schema, a name collision). */
  refused: z.array(z.object({ tool: z.string(), reason: z.string() })),
  error: z.string().nullable(),
});
export type McpDiscovery = z.infer<typeof McpDiscovery>;

export const McpServerConfig = z.object({
  name: z.string(),
  /** The org whose server it is (only its modes offer it), or null: the deployment's. */
  org: z.string().nullable(),
  url: z.string(),
  description: z.string(),
  authSecret: z.string().nullable(),
  approval: z.enum(MCP_APPROVAL_POLICIES),
  tools: z.array(z.string()).nullable(),
  timeoutMs: z.number().int(),
  category: z.string().nullable(),
  enabled: z.boolean(),
  lastDiscovery: McpDiscovery.nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type McpServerConfig = z.infer<typeof McpServerConfig>;

const jsonOrNull = <S extends z.ZodType>(schema: S) =>
  z
    .string()
    .nullable()
    .transform((text) => (text === null ? null : (JSON.parse(text) as unknown)))
    .pipe(schema.nullable());

const Row = z
  .object({
    org: z.string(),
    name: z.string(),
    url: z.string(),
    description: z.string(),
    auth_secret: z.string().nullable(),
    approval: z.enum(MCP_APPROVAL_POLICIES),
    tools: jsonOrNull(z.array(z.string())),
    timeout_ms: z.number().int(),
    category: z.string().nullable(),
    enabled: z.union([z.literal(0), z.literal(1)]),
    last_discovery: jsonOrNull(McpDiscovery),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (r): McpServerConfig => ({
      name: r.name,
      org: r.org === "" ? null : r.org,
      url: r.url,
      description: r.description,
      authSecret: r.auth_secret,
      approval: r.approval,
      tools: r.tools,
      timeoutMs: r.timeout_ms,
      category: r.category,
      enabled: r.enabled === 1,
      lastDiscovery: r.last_discovery,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }),
  );

export interface McpServerInput {
  url: string;
  description: string;
  authSecret: string | null;
  approval: McpApprovalPolicy;
  tools: string[] | null;
  timeoutMs: number;
  category: string | null;
  enabled: boolean;
}

/** The servers org `org` may use: its own and the deployment's, its own instead of the deployment's of a name. */
export async function serversSeenBy(db: Db, org: string): Promise<McpServerConfig[]> {
  const { results } = await db.prepare("SELECT * FROM mcp_servers WHERE org IN ('', ?) ORDER BY name").bind(org).all();
  const byName = new Map<string, McpServerConfig>();
  for (const server of results.map((r) => Row.parse(r))) {
    const seen = byName.get(server.name);
    if (!seen || (seen.org === null && server.org !== null)) byName.set(server.name, server);
  }
  return [...byName.values()];
}

/** The servers of one owner: an org's own, or (owner null) the deployment's. */
export class McpServerRegistry {
  private readonly org: string;

  constructor(
    private readonly db: Db,
    owner: string | null,
  ) {
    this.org = owner ?? "";
  }

  async list(): Promise<McpServerConfig[]> {
    const { results } = await this.db
      .prepare("SELECT * FROM mcp_servers WHERE org = ? ORDER BY name")
      .bind(this.org)
      .all();
    return results.map((r) => Row.parse(r));
  }

  async get(name: string): Promise<McpServerConfig | null> {
    const row = await this.db
      .prepare("SELECT * FROM mcp_servers WHERE org = ? AND name = ?")
      .bind(this.org, name)
      .first();
    return row ? Row.parse(row) : null;
  }

  /**
   * Adds or changes the server (one transaction, with `also`: its audit row); returns it and whether it is new. Its
   * last discovery is kept.
   */
  async put(
    name: string,
    input: McpServerInput,
    also: D1PreparedStatement[] = [],
  ): Promise<{ server: McpServerConfig; created: boolean }> {
    const results = await this.db.batch<Record<string, unknown>>([
      this.db.prepare("SELECT 1 AS existed FROM mcp_servers WHERE org = ? AND name = ?").bind(this.org, name),
      this.db
        .prepare(
          `INSERT INTO mcp_servers (org, name, url, description, auth_secret, approval, tools, timeout_ms, category, enabled)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (org, name) DO UPDATE SET url = excluded.url, description = excluded.description,
             auth_secret = excluded.auth_secret, approval = excluded.approval, tools = excluded.tools,
             timeout_ms = excluded.timeout_ms, category = excluded.category, enabled = excluded.enabled,
             updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
        )
        .bind(
          this.org,
          name,
          input.url,
          input.description,
          input.authSecret,
          input.approval,
          input.tools === null ? null : JSON.stringify(input.tools),
          input.timeoutMs,
          input.category,
          input.enabled ? 1 : 0,
        ),
      ...also,
      this.db.prepare("SELECT * FROM mcp_servers WHERE org = ? AND name = ?").bind(this.org, name),
    ]);
    const row = results.at(-1)?.results[0];
    if (!row) throw new Error(`MCP server '${name}' was not found after it was written.`);
    return { server: Row.parse(row), created: (results[0]?.results.length ?? 0) === 0 };
  }

  /** Removes the server, with `also` in the same batch (its audit row). */
  async delete(name: string, also: D1PreparedStatement[] = []): Promise<void> {
    await this.db.batch([
      this.db.prepare("DELETE FROM mcp_servers WHERE org = ? AND name = ?").bind(this.org, name),
      ...also,
    ]);
  }

  async recordDiscovery(name: string, discovery: McpDiscovery): Promise<void> {
    await this.db
      .prepare("UPDATE mcp_servers SET last_discovery = ? WHERE org = ? AND name = ?")
      .bind(JSON.stringify(discovery), this.org, name)
      .run();
  }
}

/** The org's MCP servers that name the secret `secret` (as "MCP server <name>"), to batch with other look-ups. */
export function serversNamingSecretStatement(db: Db, org: string, secret: string): D1PreparedStatement {
  return db
    .prepare("SELECT 'MCP server ' || name AS user FROM mcp_servers WHERE org = ? AND auth_secret = ?")
    .bind(org, secret);
}

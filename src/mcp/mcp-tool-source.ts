// The MCP tools a mode offers, for one session object: the servers its `mcp:` references name, their tools
// discovered with tools/list (cached per object for MCP_DISCOVERY_TTL_MS, dropped when a server says its list
// changed), filtered by the server's allow-list and the reference, and made AgentTools. A server that is down
// or misconfigured, and a tool the registry refuses, are left out with a logged reason, recorded in the
// server's discovery status; the turn runs with the rest.

import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Db } from "../db";
import { parseMcpReference } from "../modes/tool-references";
import type { AdminLogger } from "../observability/admin-logger";
import { secretValue } from "../secret-name";
import { secretRedactor } from "../secret-redaction";
import { OrgSecrets, secretBoxOf } from "../tenancy/org-secrets";
import type { ToolCategory } from "../tools/categories";
import type { AgentTool } from "../tools/contract";
import { AgentToolContractError, type AgentToolRegistry } from "../tools/registry";
import { McpConnection } from "./mcp-connection";
import { type McpDiscovery, type McpServerConfig, McpServerRegistry, serversSeenBy } from "./mcp-server-registry";
import { mcpAgentTool } from "./mcp-tool";

/**
 * How long connections stay open after the request that used them: long enough to carry the next turn and a
 * server's list_changed, short enough that an idle session object is not kept awake by their streams.
 */
export const IDLE_CONNECTION_MS = 60_000;

/** Discovery waits at most this long for a server, whatever its call timeout: a slow server must not hold a turn. */
const DISCOVERY_TIMEOUT_MS = 10_000;

export interface McpToolsForMode {
  /** The base registry's tools and the mode's MCP tools, under the base's categories and the servers'. */
  registry: AgentToolRegistry;
  /** The MCP tools' names, for the mode's list of offered tools. */
  offered: string[];
  /** One category per server (or per operator-given category), for the prompt's grouping. */
  categories: ToolCategory[];
}

interface Discovered {
  at: number;
  tools: Tool[];
  error: string | null;
}

export class McpToolSource {
  private readonly connections = new Map<string, McpConnection>();
  private readonly discovered = new Map<string, Discovered>();
  /** The discovery status last written per server, and when, so an unchanged one is rewritten once per TTL. */
  private readonly recorded = new Map<string, { key: string; at: number }>();
  /** The org's secrets its servers name, opened at the last listing of the registry. */
  private orgTokens: ReadonlyMap<string, string> = new Map();

  /** The MCP servers of the session's org: the deployment's and the org's own. */
  constructor(
    private readonly db: Db,
    private readonly env: object,
    private readonly org: string,
    private readonly logger: AdminLogger,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The MCP tools of a mode's tool list (its `mcp:` entries) registered beside `base`'s tools; `base` itself
   * when it names none.
   */
  async forTools(names: readonly string[], base: AgentToolRegistry): Promise<McpToolsForMode> {
    const wanted = new Map<string, Set<string> | null>();
    for (const name of names) {
      const reference = parseMcpReference(name);
      if (!reference) continue;
      const current = wanted.get(reference.server);
      if (reference.tool === null || current === null) wanted.set(reference.server, null);
      else wanted.set(reference.server, new Set([...(current ?? []), reference.tool]));
    }
    if (wanted.size === 0) return { registry: base, offered: [], categories: [] };

    let registered: McpServerConfig[];
    try {
      registered = await serversSeenBy(this.db, this.org);
      await this.openOrgTokens(registered.filter((c) => wanted.has(c.name)));
    } catch (error) {
      // The registry cannot be read (D1 down): no MCP tools this time, as for servers that are down.
      this.logger.addException("[mcp_discovery]", error, [["reason", "the MCP server registry could not be read"]]);
      return { registry: base, offered: [], categories: [] };
    }
    const configs = new Map(registered.map((c) => [c.name, c]));
    const servers: { config: McpServerConfig; only: Set<string> | null; category: string }[] = [];
    for (const [name, only] of wanted) {
      const config = configs.get(name);
      // Categories of MCP servers have ids of their own, so none can merge with a built-in one (`workspace`).
      if (config?.enabled) servers.push({ config, only, category: `mcp:${config.category ?? config.name}` });
      else {
        this.logger.addCustomEvent(
          "Warning",
          "[mcp_discovery]",
          "A mode names an MCP server that is missing or disabled.",
          [["server", name]],
        );
      }
    }
    const categories: ToolCategory[] = [];
    for (const { config, category } of servers) {
      if (categories.some((c) => c.id === category)) continue;
      categories.push({
        id: category,
        name: `MCP: ${category.slice("mcp:".length)}`,
        description: config.description,
        order: 1_000 + categories.length,
      });
    }
    // One registry for all of them and the built-in tools: the TUL-011 checks, and no two tools of one name.
    const registry = base.extended(categories);
    const discoveries = await Promise.all(servers.map((server) => this.discover(server.config)));
    const offered: string[] = [];
    for (const [index, { config, only, category }] of servers.entries()) {
      const discovery = discoveries[index] ?? { at: this.now(), tools: [], error: null };
      const refused: McpDiscovery["refused"] = [];
      const accepted: string[] = [];
      for (const tool of discovery.tools) {
        if (config.tools && !config.tools.includes(tool.name)) continue;
        const made = this.make(config, tool, category, registry);
        if (typeof made === "string") {
          refused.push({ tool: tool.name, reason: made });
          continue;
        }
        accepted.push(made.name);
        if (!only || only.has(tool.name)) offered.push(made.name);
      }
      await this.record(config, {
        at: new Date(discovery.at).toISOString(),
        toolCount: discovery.tools.length,
        tools: accepted,
        refused,
        error: discovery.error,
      });
    }
    return { registry, offered, categories };
  }

  /**
   * A server's words with every secret the Worker knows (a deployment server's token among them) and the org's tokens
   * in play taken out: what its errors may echo, before a log, the registry's last discovery or the model sees them.
   */
  redact(text: string): string {
    return secretRedactor(this.env, this.tokensInPlay())(text);
  }

  /** The org's secrets its servers send (as tokens), opened: a trace's content never shows them. */
  tokensInPlay(): string[] {
    return [...this.orgTokens.values()];
  }

  /** Opens the org's secrets that its servers among `configs` name (a secret that does not open is left out, logged). */
  private async openOrgTokens(configs: readonly McpServerConfig[]): Promise<void> {
    const names = [...new Set(configs.flatMap((c) => (c.org !== null && c.authSecret ? [c.authSecret] : [])))];
    if (names.length === 0) return;
    this.orgTokens = await new OrgSecrets(this.db, this.org).values(await secretBoxOf(this.env), names, (name, error) =>
      this.logger.addException("[mcp_discovery]", error, [["secret", name]]),
    );
  }

  /** The token a server's `authSecret` names: a Worker secret for the deployment's servers, the org's own for its. */
  private tokenOf(config: McpServerConfig): string | null {
    if (!config.authSecret) return null;
    return config.org === null
      ? secretValue(this.env, config.authSecret)
      : (this.orgTokens.get(config.authSecret) ?? null);
  }

  /** The AgentTool of one MCP tool, registered; or why it is refused (an unusable schema, a taken name). */
  private make(config: McpServerConfig, tool: Tool, category: string, registry: AgentToolRegistry): AgentTool | string {
    try {
      const agentTool = mcpAgentTool({
        connection: this.connection(config),
        tool,
        category,
        logger: this.logger,
        redact: (text) => this.redact(text),
      });
      registry.registerTool(agentTool);
      return agentTool;
    } catch (error) {
      const reason =
        error instanceof AgentToolContractError ? error.message : `its schema cannot be used (${String(error)})`;
      this.logger.addCustomEvent("Warning", "[mcp_discovery]", "An MCP tool was left out.", [
        ["server", config.name],
        ["tool", tool.name],
        ["reason", reason],
      ]);
      return reason;
    }
  }

  private connection(config: McpServerConfig): McpConnection {
    let connection = this.connections.get(config.name);
    // A changed registration (another URL, secret or policy) gets a new connection.
    if (connection && (connection.config.updatedAt !== config.updatedAt || connection.config.org !== config.org)) {
      void connection.drop();
      connection = undefined;
      this.discovered.delete(config.name);
    }
    if (!connection) {
      connection = new McpConnection(
        config,
        () => this.tokenOf(config),
        () => this.discovered.delete(config.name),
      );
      this.connections.set(config.name, connection);
    }
    return connection;
  }

  private async discover(config: McpServerConfig): Promise<Discovered> {
    const connection = this.connection(config);
    const cached = this.discovered.get(config.name);
    if (cached && this.now() - cached.at < this.ttlMs) return cached;
    try {
      const tools = await connection.listTools(Math.min(config.timeoutMs, DISCOVERY_TIMEOUT_MS));
      const found: Discovered = { at: this.now(), tools, error: null };
      this.discovered.set(config.name, found);
      return found;
    } catch (error) {
      // The SDK's message quotes the server's answer, which may echo the token it was sent.
      const message = this.redact(error instanceof Error ? error.message : String(error));
      this.logger.addCustomEvent(
        "Warning",
        "[mcp_discovery]",
        "An MCP server's tools could not be listed; they are left out.",
        [
          ["server", config.name],
          ["error", message.slice(0, 500)],
        ],
      );
      // Not cached: the next request tries again.
      return { at: this.now(), tools: [], error: message.slice(0, 500) };
    }
  }

  /**
   * Writes a server's discovery status to the registry when it differs from the last one written, or that one
   * is older than the TTL (so `at` stays the last discovery); a failed write is tried again next time.
   */
  private async record(config: McpServerConfig, discovery: McpDiscovery): Promise<void> {
    const { name } = config;
    const key = JSON.stringify({ ...discovery, at: "" });
    const last = this.recorded.get(name);
    if (last?.key === key && this.now() - last.at < this.ttlMs) return;
    try {
      await new McpServerRegistry(this.db, config.org).recordDiscovery(name, discovery);
      this.recorded.set(name, { key, at: this.now() });
    } catch (error) {
      this.logger.addException("[mcp_discovery]", error, [["server", name]]);
    }
  }

  /** Closes every connection now (the tools stay: a later call connects again). */
  async closeConnections(): Promise<void> {
    this.keepOpen();
    await Promise.all([...this.connections.values()].map((connection) => connection.drop()));
  }

  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Closes the connections once they have been idle for `idleMs`. A connection holds a stream open (the
   * server's notifications), which would keep the session object awake for as long as it lasts.
   */
  closeWhenIdle(idleMs = IDLE_CONNECTION_MS): void {
    this.keepOpen();
    // No timer at all for an object with no connection open (it would keep the object awake for nothing).
    if (![...this.connections.values()].some((connection) => connection.open)) return;
    this.idleTimer = setTimeout(() => void this.closeConnections(), idleMs);
  }

  /** A request uses the connections again: they are not idle. */
  keepOpen(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

// Migration 0023 carries a database made with the schema before it over: today's modes, model routes and MCP
// servers become the deployment's (every org still sees and uses them), admin keys stay admins of their org, and
// kept responses get the user of their session.
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateApiKey, hashApiKey } from "../../src/auth/api-keys";
import { serversSeenBy } from "../../src/mcp/mcp-server-registry";
import { D1AgentModeCatalogService } from "../../src/modes/catalog-service";
import { ModelRouteRegistry, routesSeenBy } from "../../src/routing/model-route-store";
import { freshDatabase } from "../fixtures/database";

const TENANCY = "0023_tenancy.sql";

/** Every table of the database dropped, as a new database is. */
async function emptyDatabase(): Promise<void> {
  const { results } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  ).all<{ name: string }>();
  await env.DB.batch([
    env.DB.prepare("PRAGMA defer_foreign_keys = on"),
    ...results.map((r) => env.DB.prepare(`DROP TABLE IF EXISTS "${r.name}"`)),
  ]);
}

beforeAll(async () => {
  await emptyDatabase();
  // The schema as it was before issue 40, with rows of the kinds it held.
  await applyD1Migrations(
    env.DB,
    env.TEST_MIGRATIONS.filter((m) => m.name < TENANCY),
  );
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO model_routes (name, provider, model, base_url, api_key_secret, tool_format, fallbacks)
       VALUES ('fast', 'openai_compatible', 'gpt-fast', 'https://llm.example/v1', 'UPSTREAM_A_KEY', 'native', '["default"]')`,
    ),
    env.DB.prepare("UPDATE modes SET model_route = 'fast' WHERE key = 'ddr_authoring'"),
    env.DB.prepare(
      `INSERT INTO mcp_servers (name, url, description, auth_secret, approval, timeout_ms, enabled)
       VALUES ('tools', 'https://mcp.example/mcp', 'Tools.', 'MCP_TEST_TOKEN', 'never', 30000, 1)`,
    ),
    env.DB.prepare(
      "INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES ('old_admin', ?, 'old', 'acme', 'dana', '[\"chat\",\"admin\"]')",
    ).bind(await hashApiKey("an-admin-key-from-before")),
    env.DB.prepare(
      "INSERT INTO session_index (session_id, org, user_id, mode) VALUES ('s1', 'acme', 'dana', 'general')",
    ),
    env.DB.prepare(
      "INSERT INTO agent_responses (id, org, session_id, response_json) VALUES ('resp_1', 'acme', 's1', '{}')",
    ),
  ]);
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
});

afterAll(freshDatabase);

describe("migration 0023 (tenancy)", () => {
  it("makes today's modes the deployment's, seen by every org, the default kept", async () => {
    const acme = await new D1AgentModeCatalogService(env.DB, "acme").getAllModes();
    expect(acme.map((m) => [m.key, m.org, m.isDefault])).toEqual([
      ["general", null, true],
      ["ddr_authoring", null, false],
      ["workspace", null, false],
    ]);
    expect(acme.find((m) => m.key === "ddr_authoring")?.modelRoute).toBe("fast");
  });

  it("makes today's model routes the deployment's, with their Worker secrets", async () => {
    expect((await new ModelRouteRegistry(env.DB, null).list()).map((r) => [r.name, r.org, r.apiKeySecret])).toEqual([
      ["fast", null, "UPSTREAM_A_KEY"],
    ]);
    expect((await routesSeenBy(env.DB, "any-org")).map((r) => r.name)).toEqual(["fast"]);
  });

  it("makes today's MCP servers the deployment's", async () => {
    expect((await serversSeenBy(env.DB, "acme")).map((s) => [s.name, s.org, s.authSecret])).toEqual([
      ["tools", null, "MCP_TEST_TOKEN"],
    ]);
  });

  it("keeps an admin key an admin of its org (not an operator)", async () => {
    const found = await authenticateApiKey(env.DB, "an-admin-key-from-before");
    expect(found.ok ? [found.principal.org, found.principal.scopes] : null).toEqual(["acme", ["chat", "admin"]]);
  });

  it("gives a kept response the user of its session", async () => {
    const row = await env.DB.prepare("SELECT user_id FROM agent_responses WHERE id = 'resp_1'").first<{
      user_id: string;
    }>();
    expect(row?.user_id).toBe("dana");
  });
});

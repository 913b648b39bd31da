// The audit log: each change an admin or operator makes is one row (who, whose configuration, what, before and
// after, the request), secrets by name only; an admin reads their org's rows, an operator every row; rows are never
// changed or deleted.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { AuditEntry } from "../../src/tenancy/audit-log";
import { freshDatabase } from "../fixtures/database";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import { ADMIN_A, ADMIN_B, MEMBER_A, modeBody, OPERATOR, orgRouteToUpstreamB, outcome, storeSecret } from "./fixtures";

beforeEach(freshDatabase);

async function auditOf(key: string, query = ""): Promise<AuditEntry[]> {
  const { status, json } = await call("GET", `/admin/audit${query}`, undefined, key);
  if (status !== 200) throw new Error(`audit not read (${status}): ${JSON.stringify(json)}`);
  return (json as { entries: AuditEntry[] }).entries;
}

/** The newest row of `action`, as an admin of org-a reads it (the operator's view for the deployment's). */
async function newest(action: string, key = ADMIN_A): Promise<AuditEntry | undefined> {
  return (await auditOf(key)).find((entry) => entry.action === action);
}

describe("the audit log", () => {
  it("records a route written and removed by an org's admin: who, whose, what, before and after", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const written = await newest("model_route.put");
    expect(written).toMatchObject({
      org: "org-a",
      actor: { org: "org-a", user: "alice", credential: "admin", role: "admin" },
      target: route,
      before: null,
      after: { name: route, org: "org-a", model: "org-model" },
    });
    expect(written?.requestId).toMatch(/.+/);
    await call(
      "PUT",
      `/admin/model-routes/${route}`,
      { provider: "openai_compatible", model: "m2", baseUrl: "https://x.example/v1" },
      ADMIN_A,
    );
    expect(await newest("model_route.put")).toMatchObject({ before: { model: "org-model" }, after: { model: "m2" } });
    expect((await outcome("DELETE", `/admin/model-routes/${route}`, undefined, ADMIN_A)).status).toBe(204);
    expect(await newest("model_route.delete")).toMatchObject({ target: route, before: { model: "m2" }, after: null });
  });

  it("records a secret by name and last four characters, never its value", async () => {
    await storeSecret(ADMIN_A, "OPENAI_KEY", "sk-a-value-never-logged-1234");
    await outcome("DELETE", "/admin/secrets/OPENAI_KEY", undefined, ADMIN_A);
    const rows = await auditOf(ADMIN_A);
    expect(rows.map((r) => r.action)).toEqual(["secret.delete", "secret.put"]);
    expect(rows[1]).toMatchObject({ target: "OPENAI_KEY", after: { name: "OPENAI_KEY", lastFour: "1234" } });
    const stored = await env.DB.prepare("SELECT * FROM audit_log").all();
    expect(JSON.stringify(stored.results)).not.toContain("sk-a-value-never-logged");
  });

  it("records modes put, hidden and shown", async () => {
    await call("PUT", "/admin/modes/own_mode?owner=org", modeBody(), ADMIN_A);
    await call("PUT", "/admin/modes/ddr_authoring", { enabled: false }, ADMIN_A);
    await call("PUT", "/admin/modes/ddr_authoring", { enabled: true }, ADMIN_A);
    const rows = await auditOf(ADMIN_A);
    expect(rows.map((r) => [r.action, r.target])).toEqual([
      ["mode.show", "ddr_authoring"],
      ["mode.hide", "ddr_authoring"],
      ["mode.put", "own_mode"],
    ]);
  });

  it("records MCP servers registered and removed", async () => {
    const server = { url: "https://mcp.example/mcp", description: "A server.", approval: "always" };
    await call("PUT", "/admin/mcp-servers/tools_a?owner=org", server, ADMIN_A);
    await outcome("DELETE", "/admin/mcp-servers/tools_a", undefined, ADMIN_A);
    expect((await auditOf(ADMIN_A)).map((r) => [r.action, r.target])).toEqual([
      ["mcp_server.delete", "tools_a"],
      ["mcp_server.put", "tools_a"],
    ]);
  });

  it("records keys made, changed and revoked, never the key's secret", async () => {
    const made = await call("POST", "/admin/keys", { name: "ci", scopes: ["chat"] }, ADMIN_A);
    const { key, secret } = made.json as { key: { id: string }; secret: string };
    await call("PATCH", `/admin/keys/${key.id}`, { name: "ci-2" }, ADMIN_A);
    await outcome("DELETE", `/admin/keys/${key.id}`, undefined, ADMIN_A);
    const rows = await auditOf(ADMIN_A);
    expect(rows.map((r) => r.action)).toEqual(["key.revoke", "key.change", "key.create"]);
    expect(rows[1]).toMatchObject({ target: key.id, before: { name: "ci" }, after: { name: "ci-2" } });
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it("records a user disabled and enabled, and the org's budget set", async () => {
    await call("PATCH", `/admin/users/${TEST_KEYS.chat.user}`, { disabled: true }, ADMIN_A);
    await call("PATCH", `/admin/users/${TEST_KEYS.chat.user}`, { disabled: false }, ADMIN_A);
    await call("PUT", "/admin/budget", { tokensPerDay: 1000 }, ADMIN_A);
    const rows = await auditOf(ADMIN_A);
    expect(rows.map((r) => [r.action, r.target])).toEqual([
      ["budget.put", "org"],
      ["user.enable", "bob"],
      ["user.disable", "bob"],
    ]);
    expect(rows[0]).toMatchObject({ after: { tokensPerDay: 1000 } });
  });

  it("records a deployment change by an operator as the deployment's, which an org's admin does not read", async () => {
    await call("PUT", "/admin/modes/shared_mode", modeBody(), OPERATOR);
    const row = (await auditOf(OPERATOR, "?owner=deployment"))[0];
    expect(row).toMatchObject({ org: null, action: "mode.put", actor: { role: "operator", user: "olga" } });
    expect(await auditOf(ADMIN_A)).toEqual([]);
  });

  it("shows an admin their org's rows only; an operator reads every org's", async () => {
    await storeSecret(ADMIN_A, "A_KEY");
    await storeSecret(ADMIN_B, "B_KEY");
    expect((await auditOf(ADMIN_A)).map((r) => r.target)).toEqual(["A_KEY"]);
    expect((await auditOf(ADMIN_B)).map((r) => r.target)).toEqual(["B_KEY"]);
    expect((await auditOf(OPERATOR)).map((r) => r.target).sort()).toEqual(["A_KEY", "B_KEY"]);
    expect((await outcome("GET", "/admin/audit?org=org-b", undefined, ADMIN_A)).status).toBe(403);
    expect((await outcome("GET", "/admin/audit", undefined, MEMBER_A)).status).toBe(403);
  });

  it("pages newest first, by the seq of the last row", async () => {
    for (const name of ["K_ONE", "K_TWO", "K_THREE"]) await storeSecret(ADMIN_A, name);
    const { json } = await call("GET", "/admin/audit?limit=2", undefined, ADMIN_A);
    const first = json as { entries: AuditEntry[]; next: number };
    expect(first.entries.map((r) => r.target)).toEqual(["K_THREE", "K_TWO"]);
    const rest = await auditOf(ADMIN_A, `?limit=2&before=${first.next}`);
    expect(rest.map((r) => r.target)).toEqual(["K_ONE"]);
  });

  it("is written with the change it records: a change whose row cannot be written is not made", async () => {
    await env.DB.prepare(
      "CREATE TRIGGER audit_log_refuses BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'the log is down'); END",
    ).run();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const put = await outcome("PUT", "/admin/secrets/NEVER_KEY", { value: "sk-not-stored-0123456789" }, ADMIN_A);
      const route = { provider: "openai_compatible", model: "m", baseUrl: "https://x.example/v1" };
      const routed = await outcome("PUT", "/admin/model-routes/never?owner=org", route, ADMIN_A);
      const hidden = await outcome("PUT", "/admin/modes/ddr_authoring", { enabled: false }, ADMIN_A);
      expect([put.status, routed.status, hidden.status]).toEqual([500, 500, 500]);
    } finally {
      errors.mockRestore();
    }
    const stored = await env.DB.batch([
      env.DB.prepare("SELECT count(*) AS n FROM org_secrets"),
      env.DB.prepare("SELECT count(*) AS n FROM model_routes WHERE name = 'never'"),
      env.DB.prepare("SELECT count(*) AS n FROM hidden_modes"),
    ]);
    expect(stored.map((r) => (r.results[0] as { n: number }).n)).toEqual([0, 0, 0]);
  });

  it("is append-only: a row cannot be changed or deleted, even in SQL", async () => {
    await storeSecret(ADMIN_A, "K_ONE");
    await expect(env.DB.prepare("UPDATE audit_log SET target = 'x'").run()).rejects.toThrow(/append-only/);
    await expect(env.DB.prepare("DELETE FROM audit_log").run()).rejects.toThrow(/append-only/);
  });

  it("records a grant revoked by the person who gave it", async () => {
    await env.DB.prepare(
      `INSERT INTO oauth_grants (id, kv_grant_id, org, user_id, client_id, client_name, scopes, resource)
       VALUES ('grant_audited', 'kv', 'org-a', 'bob', 'client', 'A client', '["chat"]', 'https://aptix.test/mcp')`,
    ).run();
    expect((await outcome("DELETE", "/context/grants/grant_audited", undefined, MEMBER_A)).status).toBe(204);
    const row = (await auditOf(ADMIN_A)).find((r) => r.action === "grant.revoke");
    expect(row).toMatchObject({ target: "grant_audited", actor: { user: "bob", role: "member" } });
  });
});

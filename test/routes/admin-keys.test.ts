// /admin/keys and /admin/usage: an admin manages its own org's keys only (a new key shown once, revocation at once,
// expiry refused with its own code), and reads the meter's rows summed by day, key, model, mode or route.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { newChatKey, type TestKey } from "../passthrough/harness";

async function as(key: TestKey | string, method: string, path: string, body?: unknown, accept?: string) {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method,
    headers: {
      authorization: `Bearer ${typeof key === "string" ? key : key.key}`,
      "content-type": "application/json",
      ...(accept ? { accept } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    text,
    headers: response.headers,
    json: text.startsWith("{") ? JSON.parse(text) : null,
  };
}

const orgAdmin = () => newChatKey(`org-keys-${crypto.randomUUID()}`, ["chat", "admin"]);

interface KeyView {
  id: string;
  name: string;
  scopes: string[];
  expiresAt: string | null;
  budget: { limits: { tokensPerDay: number | null } };
}

describe("/admin/keys", () => {
  it("creates a key shown once, which works at once, and lists it without its secret", async () => {
    const admin = await orgAdmin();
    const created = await as(admin, "POST", "/admin/keys", { name: "ci bot", scopes: ["chat"] });
    expect(created.status).toBe(201);
    const { key, secret } = created.json as { key: KeyView; secret: string };
    expect(secret).toMatch(/^ak_[A-Za-z0-9_-]{43}$/);
    expect((await as(secret, "GET", "/modes")).status).toBe(200);
    const listed = await as(admin, "GET", "/admin/keys");
    expect((listed.json.keys as KeyView[]).map((k) => k.name)).toContain("ci bot");
    expect(listed.text).not.toContain(secret);
    expect(key).toMatchObject({ name: "ci bot", scopes: ["chat"], expiresAt: null });
  });

  it("revokes a key: its next request is refused", async () => {
    const admin = await orgAdmin();
    const { key, secret } = (await as(admin, "POST", "/admin/keys", { name: "short-lived" })).json as {
      key: KeyView;
      secret: string;
    };
    expect((await as(secret, "GET", "/modes")).status).toBe(200);
    expect((await as(admin, "DELETE", `/admin/keys/${key.id}`)).status).toBe(204);
    const refused = await as(secret, "GET", "/modes");
    expect([refused.status, refused.json.error.code]).toEqual([401, "invalid_api_key"]);
  });

  it("refuses an expired key with api_key_expired", async () => {
    const admin = await orgAdmin();
    const { key, secret } = (await as(admin, "POST", "/admin/keys", { name: "expiring" })).json as {
      key: KeyView;
      secret: string;
    };
    await env.DB.prepare("UPDATE api_keys SET expires_at = '2020-01-01T00:00:00.000Z' WHERE id = ?").bind(key.id).run();
    // A key not yet read by this isolate (the cache would keep the old expiry for its short bound).
    const answer = await as(secret, "GET", "/modes");
    expect([answer.status, answer.json.error.code]).toEqual([401, "api_key_expired"]);
  });

  it("changes a key's scopes, expiry and budget with PATCH", async () => {
    const admin = await orgAdmin();
    const { key } = (await as(admin, "POST", "/admin/keys", { name: "changing" })).json as { key: KeyView };
    const changed = await as(admin, "PATCH", `/admin/keys/${key.id}`, {
      scopes: ["chat", "admin"],
      expiresAt: "2099-01-01T00:00:00Z",
      budget: { tokensPerDay: 5000 },
    });
    expect(changed.status).toBe(200);
    expect(changed.json.key).toMatchObject({
      scopes: ["chat", "admin"],
      expiresAt: "2099-01-01T00:00:00.000Z",
      budget: { limits: { tokensPerDay: 5000, tokensPerMonth: null, costPerMonthUsd: null } },
    });
  });

  it("never shows, changes or revokes another org's key: 404", async () => {
    const admin = await orgAdmin();
    const other = await orgAdmin();
    const { key } = (await as(other, "POST", "/admin/keys", { name: "theirs" })).json as { key: KeyView };
    expect((await as(admin, "DELETE", `/admin/keys/${key.id}`)).json.error.code).toBe("api_key_not_found");
    expect((await as(admin, "PATCH", `/admin/keys/${key.id}`, { name: "mine" })).status).toBe(404);
    expect(((await as(admin, "GET", "/admin/keys")).json.keys as KeyView[]).map((k) => k.id)).not.toContain(key.id);
  });

  it("refuses bad input naming the field: an unknown scope, an expiry in the past, an empty change", async () => {
    const admin = await orgAdmin();
    const scope = await as(admin, "POST", "/admin/keys", { name: "x", scopes: ["root"] });
    const past = await as(admin, "POST", "/admin/keys", { name: "x", expiresAt: "2001-01-01T00:00:00Z" });
    expect([scope.status, scope.json.error.param, past.status, past.json.error.param]).toEqual([
      400,
      "scopes.0",
      400,
      "expiresAt",
    ]);
    const { key } = (await as(admin, "POST", "/admin/keys", { name: "y" })).json as { key: KeyView };
    expect((await as(admin, "PATCH", `/admin/keys/${key.id}`, {})).status).toBe(400);
  });
});

describe("/admin/usage", () => {
  async function seedRows(org: string): Promise<void> {
    const insert = env.DB.prepare(
      `INSERT INTO usage_records (id, org, key_id, user_id, endpoint, route, model, prompt_tokens, completion_tokens,
         total_tokens, latency_ms, outcome, cost_micros, created_at) VALUES (?, ?, ?, 'u', '/v1/chat/completions', ?, ?, ?, ?, ?, 10, ?, ?, ?)`,
    );
    await env.DB.batch([
      insert.bind(crypto.randomUUID(), org, "k1", "fast", "m1", 10, 5, 15, "ok", 1500, "2026-11-20T10:00:00.000Z"),
      insert.bind(crypto.randomUUID(), org, "k1", "fast", "m2", 20, 5, 25, "ok", 0, "2026-11-21T10:00:00.000Z"),
      insert.bind(crypto.randomUUID(), org, "k2", "default", "m1", 0, 0, 0, "error", 0, "2026-11-21T11:00:00.000Z"),
      insert.bind(
        crypto.randomUUID(),
        "another-org",
        "k9",
        "fast",
        "m1",
        99,
        1,
        100,
        "ok",
        0,
        "2026-11-21T11:00:00.000Z",
      ),
    ]);
  }

  it("sums its org's rows by day, with a series by model", async () => {
    const admin = await orgAdmin();
    await seedRows(admin.org);
    const answer = await as(admin, "GET", "/admin/usage?from=2026-11-20&to=2026-11-21&groupBy=day&by=model");
    expect(answer.json.rows.map((r: Record<string, unknown>) => [r.group, r.series, r.totalTokens, r.errors])).toEqual([
      ["2026-11-20", "m1", 15, 0],
      ["2026-11-21", "m1", 0, 1],
      ["2026-11-21", "m2", 25, 0],
    ]);
  });

  it("sums by key with calls, tokens and cost", async () => {
    const admin = await orgAdmin();
    await seedRows(admin.org);
    const answer = await as(admin, "GET", "/admin/usage?from=2026-11-01&to=2026-11-30&groupBy=key");
    expect(answer.json.rows).toEqual([
      expect.objectContaining({ group: "k1", calls: 2, totalTokens: 40, costUsd: 0.0015 }),
      expect.objectContaining({ group: "k2", calls: 1, totalTokens: 0, errors: 1 }),
    ]);
  });

  it("answers CSV when asked with Accept: text/csv", async () => {
    const admin = await orgAdmin();
    await seedRows(admin.org);
    const answer = await as(
      admin,
      "GET",
      "/admin/usage?from=2026-11-01&to=2026-11-30&groupBy=route",
      undefined,
      "text/csv",
    );
    expect(answer.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(answer.text.split("\r\n")).toEqual([
      "group,series,calls,promptTokens,cachedInputTokens,cacheWriteInputTokens,completionTokens,totalTokens,costUsd,errors,partial,latencyMsAvg",
      "default,,1,0,0,0,0,0,0,1,0,10",
      "fast,,2,30,0,0,10,40,0.0015,0,0,10",
      "",
    ]);
  });

  it("refuses an unknown grouping naming the parameter", async () => {
    const admin = await orgAdmin();
    const answer = await as(admin, "GET", "/admin/usage?groupBy=color");
    expect([answer.status, answer.json.error.param]).toEqual([400, "groupBy"]);
  });
});

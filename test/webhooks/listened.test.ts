// The statement the session's list write asks with a turn's stop event (listenedStatement): whether any endpoint hears
// it, by the consumer's own conditions (org, enabled, made by the event's time, the org's or the event's member's,
// subscribed to its type, an A2A push config for its own turn only). Each test has an org of its own, its endpoints
// stored as rows.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WebhookEndpoints } from "../../src/webhooks/endpoint-store";

const AT = "2030-01-01T00:00:00.000Z";
const BEFORE = "2029-12-31T23:59:59.000Z";
const AFTER = "2030-01-01T00:00:01.000Z";

interface Row {
  org: string;
  owner?: string | null;
  events?: string;
  enabled?: 0 | 1;
  createdAt?: string;
  a2aTaskId?: string | null;
}

let unique = 0;
const newOrg = () => `org-listened-${++unique}-${crypto.randomUUID().slice(0, 8)}`;

async function store(row: Row): Promise<void> {
  await env.DB.prepare(
    `INSERT INTO webhook_endpoints (id, org, owner_user, created_by, url, events, description, enabled,
       secret_ciphertext, wrapped_key, key_id, created_at, updated_at, a2a_task_id)
     VALUES (?, ?, ?, 'alice', 'https://example.com/hook', ?, '', ?, 'c', 'k', 'kid', ?, ?, ?)`,
  )
    .bind(
      crypto.randomUUID(),
      row.org,
      row.owner ?? null,
      row.events ?? JSON.stringify(["turn.completed"]),
      row.enabled ?? 1,
      row.createdAt ?? BEFORE,
      row.createdAt ?? BEFORE,
      row.a2aTaskId ?? null,
    )
    .run();
}

/** The statement's answer for a turn.completed of bob's turn `turn-1` in `org` at AT (null: no row). */
async function heard(org: string, user: string | null = "bob"): Promise<number | null> {
  const statement = new WebhookEndpoints(env.DB).listenedStatement(org, user, "turn.completed", AT, "turn-1");
  const row = await statement.first<{ heard: number }>();
  return row?.heard ?? null;
}

describe("whether anyone hears an event", () => {
  it("answers 1 for an enabled org endpoint subscribed to the type", async () => {
    const org = newOrg();
    await store({ org, events: JSON.stringify(["turn.failed", "turn.completed"]) });
    expect(await heard(org)).toBe(1);
  });

  it("answers 0 for an org with no endpoint", async () => {
    expect(await heard(newOrg())).toBe(0);
  });

  it("does not count another org's endpoint", async () => {
    await store({ org: newOrg() });
    expect(await heard(newOrg())).toBe(0);
  });

  it("does not count a disabled endpoint", async () => {
    const org = newOrg();
    await store({ org, enabled: 0 });
    expect(await heard(org)).toBe(0);
  });

  it("does not count an endpoint subscribed to other event types only", async () => {
    const org = newOrg();
    await store({ org, events: JSON.stringify(["turn.failed", "turn.paused"]) });
    expect(await heard(org)).toBe(0);
  });

  it("does not count another member's personal endpoint", async () => {
    const org = newOrg();
    await store({ org, owner: "carol" });
    expect(await heard(org)).toBe(0);
  });

  it("counts the event's member's own personal endpoint", async () => {
    const org = newOrg();
    await store({ org, owner: "bob" });
    expect(await heard(org)).toBe(1);
  });

  it("does not count a personal endpoint for an event of no member", async () => {
    const org = newOrg();
    await store({ org, owner: "bob" });
    expect(await heard(org, null)).toBe(0);
  });

  it("does not count an endpoint made after the event", async () => {
    const org = newOrg();
    await store({ org, createdAt: AFTER });
    expect(await heard(org)).toBe(0);
  });

  it("counts an A2A push config of the event's own turn", async () => {
    const org = newOrg();
    await store({ org, owner: "bob", a2aTaskId: "turn-1" });
    expect(await heard(org)).toBe(1);
  });

  it("does not count an A2A push config of another turn", async () => {
    const org = newOrg();
    await store({ org, owner: "bob", a2aTaskId: "turn-2" });
    expect(await heard(org)).toBe(0);
  });

  it("counts an endpoint whose events do not read as JSON (the consumer decides)", async () => {
    const org = newOrg();
    await store({ org, events: "not json" });
    expect(await heard(org)).toBe(1);
  });
});

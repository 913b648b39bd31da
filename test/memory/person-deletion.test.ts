// DELETE /admin/users/{id}: a disabled person's data goes for good (sessions through the session deletion, memories,
// schedules, webhook endpoints, email and name), their row stays disabled so their key stays refused; a person not
// disabled first is refused and keeps everything.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { callAs } from "../fixtures/sessions";

const ADMIN = TEST_KEYS.admin.key;
const CAROL = TEST_KEYS.otherMember.key;
const carol = TEST_KEYS.otherMember.user;

const call = callAs;

const count = (table: string, column: string) =>
  env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE org = 'org-a' AND ${column} = ?`).bind(carol).first("n");

describe("deleting a person", () => {
  it("refuses a person not disabled first, and deletes a disabled one's data, keeping their key refused", async () => {
    const session = await call(CAROL, "POST", "/context/sessions", {});
    const sessionId = String(session.body.sessionId);
    expect((await call(CAROL, "POST", "/context/memories", { text: "Carol sails on Sundays" })).status).toBe(201);
    const schedule = { name: "Daily", prompt: "hi", every: "1d" };
    expect((await call(CAROL, "POST", "/context/schedules", schedule)).status).toBe(201);
    const webhook = { url: `${env.TEST_WEBHOOK_RECEIVER_URL}/hooks/deletion`, events: ["schedule.failed"] };
    expect((await call(CAROL, "POST", "/context/webhooks", webhook)).status).toBe(201);

    const early = await call(ADMIN, "DELETE", `/admin/users/${carol}`);
    expect(early.status).toBe(409);
    expect((early.body.error as { code: string }).code).toBe("user_not_disabled");
    expect(await count("memories", "user_id")).toBe(1);

    expect((await call(ADMIN, "PATCH", `/admin/users/${carol}`, { disabled: true })).status).toBe(200);
    const deleted = await call(ADMIN, "DELETE", `/admin/users/${carol}`);
    expect(deleted).toEqual({
      status: 200,
      body: { userId: carol, deleted: { sessions: 1, memories: 1, schedules: 1, webhooks: 1 }, sessionsLeft: 0 },
    });
    expect((await call(ADMIN, "GET", `/context/sessions/${sessionId}`)).status).toBe(404);
    for (const [table, column] of [
      ["memories", "user_id"],
      ["schedules", "user_id"],
      ["webhook_endpoints", "owner_user"],
      ["session_index", "user_id"],
    ] as const) {
      expect(await count(table, column)).toBe(0);
    }
    const row = await env.DB.prepare("SELECT email, name, disabled_at FROM users WHERE org = 'org-a' AND id = ?")
      .bind(carol)
      .first();
    expect(row).toMatchObject({ email: null, name: null, disabled_at: expect.any(String) });
    expect((await call(CAROL, "GET", "/context/memories")).status).toBe(403);
  });
});

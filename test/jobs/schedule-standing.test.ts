// A schedule acts with its creator's standing as it is now, not as it was when it was made: a schedule an admin made
// in a member's session runs there only while its creator is still an admin (the key's scopes as they are; a person
// signed in by single sign-on, the scopes of their latest sign-in), and it is changed or run by hand only by someone
// who may act in that session now, not by the creator's narrower key. Turning it off needs the schedule alone.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { keyStanding } from "../../src/auth/api-keys";
import { runnerOf, type ScheduleRunner } from "../../src/jobs/schedule-runner";
import type { Schedule } from "../../src/wire/schedule";
import { call, createSession, type ErrorBody } from "../fixtures/sessions";
import { newChatKey, newUserKey, type TestKey } from "../passthrough/harness";

interface Scene {
  /** The admin's key (chat and admin) and their chat-only key: one person, user "tester". */
  admin: TestKey;
  adminChatOnly: TestKey;
  /** The member's session the admin's schedule continues. */
  sessionId: string;
  schedule: Schedule;
}

/** An org of its own: a member's session, and a schedule its admin made there. */
async function scene(): Promise<Scene> {
  const org = `org-standing-${crypto.randomUUID()}`;
  const admin = await newChatKey(org, ["chat", "admin"]);
  const adminChatOnly = await newChatKey(org, ["chat"]);
  const member = await newUserKey(org);
  const sessionId = await createSession(undefined, member.key);
  const { status, json } = await call(
    "POST",
    "/context/schedules",
    { name: "Nudge", prompt: "Any news?", every: "1h", sessionId },
    admin.key,
  );
  if (status !== 201) throw new Error(`schedule not created (${status}): ${JSON.stringify(json)}`);
  return { admin, adminChatOnly, sessionId, schedule: json as Schedule };
}

const runNow = (scheduleId: string) =>
  runInDurableObject(runnerOf(env, scheduleId), (runner: ScheduleRunner) => runner.runNow());

async function narrowToChat(key: TestKey): Promise<void> {
  await env.DB.prepare(`UPDATE api_keys SET scopes = '["chat"]' WHERE id = ?`).bind(key.keyId).run();
}

describe("a schedule's standing", () => {
  it("runs in a member's session while its creator is an admin", async () => {
    const { schedule, sessionId } = await scene();
    const run = await runNow(schedule.scheduleId);
    expect([run?.status, run?.sessionId]).toEqual(["running", sessionId]);
  });

  it("fails its run in a member's session, session_not_found, once its creator's key is narrowed to chat", async () => {
    const { admin, schedule, sessionId } = await scene();
    await narrowToChat(admin);
    const run = await runNow(schedule.scheduleId);
    expect([run?.status, run?.sessionId, run?.turnId]).toEqual(["failed", sessionId, null]);
    expect(run?.reason).toMatch(/^session_not_found: /);
  });

  it("is not changed or run by hand through its creator's chat-only key, which may not act in the member's session", async () => {
    const { adminChatOnly, schedule, sessionId } = await scene();
    const path = `/context/schedules/${schedule.scheduleId}`;
    const answers = [
      await call("PATCH", path, { prompt: "Something else" }, adminChatOnly.key),
      await call("POST", `${path}/run`, undefined, adminChatOnly.key),
    ];
    expect(answers.map(({ status, json }) => [status, (json as ErrorBody).error.code])).toEqual([
      [404, "session_not_found"],
      [404, "session_not_found"],
    ]);
    const kept = await call("GET", path, undefined, adminChatOnly.key);
    expect([(kept.json as Schedule).prompt, (kept.json as Schedule).sessionId]).toEqual(["Any news?", sessionId]);
  });

  it("is turned off through its creator's chat-only key", async () => {
    const { adminChatOnly, schedule } = await scene();
    const off = await call("PATCH", `/context/schedules/${schedule.scheduleId}`, { enabled: false }, adminChatOnly.key);
    expect([off.status, (off.json as Schedule).enabled, (off.json as Schedule).nextRunAt]).toEqual([200, false, null]);
  });

  it("takes a person signed in by single sign-on as an admin only while their latest sign-in was one", async () => {
    const org = `org-standing-sso-${crypto.randomUUID()}`;
    const signIn = (scopes: string[], createdAt: string) =>
      env.DB.prepare(
        `INSERT INTO browser_sessions (id, secret_hash, org, user_id, scopes, via, api_key_id, created_at, expires_at,
           idle_until) VALUES (?, ?, ?, 'pat', ?, 'oidc', NULL, ?, '2100-01-01T00:00:00Z', '2100-01-01T00:00:00Z')`,
      )
        .bind(
          crypto.randomUUID(),
          crypto.randomUUID().replaceAll("-", "").repeat(2),
          org,
          JSON.stringify(scopes),
          createdAt,
        )
        .run();
    await signIn(["chat", "admin"], "2026-11-01T00:00:00.000Z");
    expect(await keyStanding(env.DB, org, "pat", "user:pat")).toEqual({ problem: null, admin: true });
    await signIn(["chat"], "2026-11-02T00:00:00.000Z");
    expect(await keyStanding(env.DB, org, "pat", "user:pat", Date.now() + 3_600_000)).toEqual({
      problem: null,
      admin: false,
    });
  });

  it("takes a key id no key of the org has (a key deleted) as revoked, not as a person's own bucket", async () => {
    const org = `org-standing-gone-${crypto.randomUUID()}`;
    expect(await keyStanding(env.DB, org, "pat", "deleted-key-id")).toEqual({ problem: "revoked", admin: false });
  });
});

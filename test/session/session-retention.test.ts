// Retention (SESSION_RETENTION_DAYS): the hourly cron deletes sessions idle for longer than N days, the longest idle
// first, at most SESSION_RETENTION_BATCH a run; off by default. Each deleted session answers 404 like a deleted one.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { expireIdleSessions } from "../../src/session/retention";
import { call, createSession } from "../fixtures/sessions";

const DAY_MS = 86_400_000;

/** The test's env with retention settings (a new object: its settings are parsed anew). */
function withRetention(days: string, batch = "50"): Cloudflare.Env {
  return { ...env, SESSION_RETENTION_DAYS: days, SESSION_RETENTION_BATCH: batch };
}

const exists = async (id: string) => (await call("GET", `/context/sessions/${id}`)).status === 200;

/** Every session made so far is idle by then. */
const farFuture = () => Date.now() + 3_650 * DAY_MS;

/** Deletes every session the file made before (idle by `farFuture`), so a test counts only its own. */
async function clearAll(): Promise<void> {
  while ((await expireIdleSessions(withRetention("1", "1000"), farFuture())).deleted > 0) {}
}

/** Two sessions, one made a moment after the other, and a time between them. */
async function olderAndNewer(): Promise<{ older: string; newer: string; between: number }> {
  const older = await createSession();
  await new Promise((resolve) => setTimeout(resolve, 30));
  const between = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 30));
  const newer = await createSession();
  return { older, newer, between };
}

describe("session retention", () => {
  it("deletes nothing when SESSION_RETENTION_DAYS is 0, the default", async () => {
    const id = await createSession();
    expect(await expireIdleSessions(env, farFuture())).toEqual({ deleted: 0, kept: 0 });
    expect(await exists(id)).toBe(true);
  });

  it("deletes the sessions idle longer than N days, and keeps the others", async () => {
    await clearAll();
    const { older, newer, between } = await olderAndNewer();
    const run = await expireIdleSessions(withRetention("30"), between + 30 * DAY_MS);
    expect(run).toEqual({ deleted: 1, kept: 0 });
    expect([await exists(older), await exists(newer)]).toEqual([false, true]);
    const listed = await env.DB.prepare("SELECT session_id FROM session_index WHERE session_id IN (?, ?)")
      .bind(older, newer)
      .all<{ session_id: string }>();
    expect(listed.results.map((r) => r.session_id)).toEqual([newer]);
  });

  it("deletes at most SESSION_RETENTION_BATCH a run, the longest idle first", async () => {
    await clearAll();
    const ids = [await createSession(), await createSession(), await createSession()];
    const settings = withRetention("1", "2");
    expect(await expireIdleSessions(settings, farFuture())).toEqual({ deleted: 2, kept: 0 });
    expect(await Promise.all(ids.map(exists))).toEqual([false, false, true]);
    expect(await expireIdleSessions(settings, farFuture())).toEqual({ deleted: 1, kept: 0 });
    expect(await exists(ids[2] ?? "")).toBe(false);
  });

  it("keeps a session the list calls idle but whose object changed since, and corrects its entry", async () => {
    await clearAll();
    const { older, newer, between } = await olderAndNewer();
    // The list lags: it says the newer session has been idle since long ago.
    await env.DB.prepare("UPDATE session_index SET updated_at = '2020-01-01T00:00:00.000Z' WHERE session_id = ?")
      .bind(newer)
      .run();
    const run = await expireIdleSessions(withRetention("30"), between + 30 * DAY_MS);
    expect(run).toEqual({ deleted: 1, kept: 1 });
    expect([await exists(older), await exists(newer)]).toEqual([false, true]);
    const entry = await env.DB.prepare("SELECT updated_at FROM session_index WHERE session_id = ?")
      .bind(newer)
      .first<{ updated_at: string }>();
    expect(entry?.updated_at).not.toBe("2020-01-01T00:00:00.000Z");
  });

  it("runs from the Worker's scheduled handler (the hourly cron)", async () => {
    await clearAll();
    const { older, newer, between } = await olderAndNewer();
    const controller = createScheduledController({ scheduledTime: between + 30 * DAY_MS, cron: "17 * * * *" });
    const ctx = createExecutionContext();
    worker.scheduled(controller, withRetention("30"), ctx);
    await waitOnExecutionContext(ctx);
    expect([await exists(older), await exists(newer)]).toEqual([false, true]);
  });
});

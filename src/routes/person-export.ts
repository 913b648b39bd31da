// GET /context/export: the caller's own data, as JSON (docs/memory.md): the user row we hold, their memories, their
// sessions' ids, titles and dates, their schedules and the webhooks they own. What is cheap to gather from D1; a
// conversation's own text is its session's export (GET /context/sessions/{id}/export).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { findUser } from "../auth/users";
import type { Db } from "../db";
import { BEARER, errors, json, routes } from "../http";
import { listSchedules, scheduleView } from "../jobs/schedule-rows";
import { MemoryStore } from "../memory/memory-store";
import { listSessions } from "../session/session-index";
import { viewOf, WebhookEndpoints, WebhookEndpointView } from "../webhooks/endpoint-store";
import { Memory } from "../wire/memory";
import { Schedule } from "../wire/schedule";
import { SessionListEntry } from "../wire/session";

/** A person's own data, as the route answers it. */
const PersonExport = z.object({
  exportedAt: z.string(),
  user: z.object({
    org: z.string(),
    id: z.string(),
    email: z.string().nullable(),
    name: z.string().nullable(),
    firstSeenAt: z.string().nullable(),
    lastSeenAt: z.string().nullable(),
  }),
  memories: z.array(Memory).describe("Your own memories (your organization's are its admins')."),
  sessions: z
    .array(SessionListEntry)
    .describe("Your sessions, archived ones too; each conversation is GET /context/sessions/{id}/export."),
  schedules: z.array(Schedule),
  webhooks: z.array(WebhookEndpointView).describe("The webhook endpoints you own (their signing secrets never)."),
});

/** Sessions read a page at a time. */
const SESSION_PAGE = 500;

/** Every session of the person's, archived or not, newest change first. */
async function allSessions(db: Db, owner: { org: string; user: string }): Promise<SessionListEntry[]> {
  const sessions: SessionListEntry[] = [];
  for (const archived of [false, true]) {
    let after: [string, string] | null = null;
    for (;;) {
      const page = await listSessions(db, owner, { limit: SESSION_PAGE, after }, { archived, query: null });
      sessions.push(...page.sessions);
      const last = page.sessions.at(-1);
      if (!page.more || !last) break;
      after = [last.updatedAt, last.sessionId];
    }
  }
  return sessions;
}

export const personExportRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/context/export",
    summary: "Your own data: the user we know, your memories, sessions (ids, titles, dates), schedules and webhooks",
    security: BEARER,
    middleware: [requireScope("chat")],
    tags: ["memory"],
    responses: { 200: json(PersonExport, "Your data."), ...errors(401, 403) },
  }),
  async (c) => {
    const { org, user } = c.get("principal");
    const db = c.get("db");
    const [row, memories, sessions, schedules, webhooks] = await Promise.all([
      findUser(db, org, user),
      new MemoryStore(db, org, user).own(),
      allSessions(db, { org, user }),
      listSchedules(db, { org, user, admin: false }),
      new WebhookEndpoints(db).list(org, user),
    ]);
    return c.json(
      {
        exportedAt: new Date().toISOString(),
        user: {
          org,
          id: user,
          email: row?.email ?? null,
          name: row?.name ?? null,
          firstSeenAt: row?.firstSeenAt ?? null,
          lastSeenAt: row?.lastSeenAt ?? null,
        },
        memories,
        sessions,
        schedules: schedules.map(scheduleView),
        webhooks: webhooks.map(viewOf),
      },
      200,
    );
  },
);

// Deleting a disabled person of an org for good (DELETE /admin/users/{id}): their sessions through the session
// deletion (so each session's index rows, kept responses and anything fed from them go the way a person's own
// DELETE takes them), their memories, schedules (disarmed first) and webhook endpoints, and the email and name we
// held. Their user row stays, disabled: it is what refuses their keys, browser sessions and grants from then on.
// Sessions go SESSIONS_A_REQUEST at a time (each is a request to its object); the answer says how many are left,
// and the admin asks again.

import { forgetUserDetailsStatement } from "../auth/users";
import type { Db } from "../db";
import { deleteSchedule, listSchedules } from "../jobs/schedule-rows";
import { runnerOf } from "../jobs/schedule-runner";
import { forgetPersonStatement } from "../memory/memory-store";
import { JsonAdminLogger } from "../observability/admin-logger";
import { unindexPersonMessages } from "../search/message-index";
import type { Caller } from "../session/caller";
import { notifyMemoryChange } from "../session/memory-notify";
import { sessionStubOrNull } from "../session/session-client";
import { sessionsOfUser } from "../session/session-index";
import { WebhookDeliveries } from "../webhooks/delivery-store";
import { WebhookEndpoints } from "../webhooks/endpoint-store";

/** Sessions one request deletes at most. */
export const SESSIONS_A_REQUEST = 25;

export interface PersonDeleted {
  sessions: number;
  memories: number;
  schedules: number;
  webhooks: number;
  /** Sessions still to delete: ask again. */
  sessionsLeft: number;
}

/** Deletes what `user` of `org` holds, as `admin` (an admin of the org: the session deletion's caller). */
export async function deletePerson(
  env: Cloudflare.Env,
  db: Db,
  admin: Caller,
  org: string,
  user: string,
  also: D1PreparedStatement[] = [],
): Promise<PersonDeleted> {
  const { count, ids } = await sessionsOfUser(db, org, user, SESSIONS_A_REQUEST);
  let sessions = 0;
  for (const sessionId of ids) {
    const deleted = await sessionStubOrNull(env, sessionId)?.deleteSession(admin);
    if (deleted?.ok) sessions++;
  }
  const schedules = await listSchedules(db, { org, user, admin: false });
  for (const schedule of schedules) {
    await runnerOf(env, schedule.scheduleId).disarm();
    await deleteSchedule(db, schedule.scheduleId);
  }
  const endpoints = new WebhookEndpoints(db);
  const deliveries = new WebhookDeliveries(db);
  const owned = await endpoints.list(org, user);
  const results = await db.batch([
    forgetPersonStatement(db, org, user),
    // Their messages leave the search index at once, the sessions still to delete (sessionsLeft) among them.
    unindexPersonMessages(db, org, user),
    ...owned.flatMap((endpoint) => [
      endpoints.deleteStatement(org, endpoint.id),
      ...deliveries.deleteOfEndpointStatements(endpoint.id),
    ]),
    forgetUserDetailsStatement(db, org, user),
    ...also,
  ]);
  // Their sessions not deleted yet (sessionsLeft) drop their copies of the memories forgotten, before the answer.
  await notifyMemoryChange(env, db, org, user, new JsonAdminLogger({ org }));
  return {
    sessions,
    memories: results[0]?.results.length ?? 0,
    schedules: schedules.length,
    webhooks: owned.length,
    sessionsLeft: Math.max(0, count - sessions),
  };
}

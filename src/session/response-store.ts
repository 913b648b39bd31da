// The responses the agent's Responses door keeps (D1 `agent_responses`, migration 0019): each tied to its org and
// user (a member reads and deletes their own; an admin of the org any of it), the session and turn that answered it,
// and the session's head after it, so a later request's previous_response_id finds the session to continue, and
// tells whether that response is still the session's latest. The one module with this table's SQL; it sits with the
// session index, which deletes a session's kept responses with its entry.
import { z } from "zod";
import type { Db } from "../db";
import type { ResponseObject } from "../wire/responses";

export function newResponseId(): string {
  return `resp_${crypto.randomUUID().replaceAll("-", "")}`;
}

export interface ResponsePlace {
  org: string;
  /** The caller: the response's user when the session's owner is not in the index yet (a session just made). */
  user: string;
  sessionId: string;
  turnId: string | null;
  head: string | null;
}

/** The statement that keeps a response (written after the session recorded its head, before the answer goes out). */
export function insertResponse(db: Db, place: ResponsePlace, response: ResponseObject): D1PreparedStatement {
  return db
    .prepare(
      // The response is its session owner's (an admin continuing a member's session keeps it the member's).
      `INSERT INTO agent_responses (id, org, user_id, session_id, turn_id, head, response_json)
       VALUES (?1, ?2, COALESCE((SELECT user_id FROM session_index WHERE session_id = ?4 AND org = ?2), ?3), ?4, ?5, ?6, ?7)`,
    )
    .bind(response.id, place.org, place.user, place.sessionId, place.turnId, place.head, JSON.stringify(response));
}

export interface StoredResponse {
  sessionId: string;
  response: ResponseObject;
  /** No answer of the session came after it (its head is still the session's head). */
  latest: boolean;
}

// The stored JSON is the response this module wrote (insertResponse), whole: read back as it was written.
const StoredResponseRow = z
  .object({ session_id: z.string(), response_json: z.string(), latest: z.number().nullable() })
  .transform(
    (r): StoredResponse => ({
      sessionId: r.session_id,
      response: JSON.parse(r.response_json) as ResponseObject,
      latest: r.latest === 1,
    }),
  );

/** Who asks for a kept response: its org and user, and whether they are an admin of the org. */
export interface ResponseReader {
  org: string;
  user: string;
  admin: boolean;
}

/** A response the reader may see (its own, or any of its org's for an admin) that was not deleted; else not found. */
export async function findResponse(db: Db, reader: ResponseReader, id: string): Promise<StoredResponse | null> {
  const row = await db
    .prepare(
      `SELECT r.session_id, r.response_json, r.head IS NOT NULL AND r.head = t.head AS latest
       FROM agent_responses r LEFT JOIN agent_threads t ON t.session_id = r.session_id
       WHERE r.id = ? AND r.org = ? AND (r.user_id = ? OR ? = 1) AND r.deleted_at IS NULL`,
    )
    .bind(id, reader.org, reader.user, reader.admin ? 1 : 0)
    .first();
  return row ? StoredResponseRow.parse(row) : null;
}

/** Hides a response from view (GET and previous_response_id no longer find it); false when there was none. */
export async function hideResponse(db: Db, reader: ResponseReader, id: string): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE agent_responses SET deleted_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
       WHERE id = ? AND org = ? AND (user_id = ? OR ? = 1) AND deleted_at IS NULL`,
    )
    .bind(id, reader.org, reader.user, reader.admin ? 1 : 0)
    .run();
  return result.meta.changes > 0;
}

/** The statement that deletes every response `sessionId` kept (run in one batch with its index entry's delete). */
export function deleteSessionResponses(db: Db, sessionId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM agent_responses WHERE session_id = ?").bind(sessionId);
}

// Single-use WebSocket tickets: a key-authenticated caller gets one; a browser passes it as ?ticket=.
// Only the ticket's hash is stored, in the session's own storage, so a ticket opens this session only.
import { z } from "zod";
import { hashApiKey } from "../auth/api-keys";
import { errorResponse } from "../errors";
import { randomToken } from "../secret-text";

export const TICKET_TTL_MS = 60_000;

const TicketRow = z.object({ org: z.string(), user_id: z.string(), key_id: z.string(), expires_at: z.number() });

type Row = Record<string, SqlStorageValue>;

export interface TicketHolder {
  org: string;
  user: string;
  /** The key that asked for the ticket: the socket's turns draw on its model call budget. */
  keyId: string;
}

export class TicketStore {
  /** Over the session's `ws_tickets` table (the versioned schema's, session-schema.ts). */
  constructor(private readonly sql: SqlStorage) {}

  async issue(holder: TicketHolder, now = Date.now()): Promise<{ ticket: string; expiresAt: string }> {
    const ticket = randomToken("wst_");
    this.sql.exec("DELETE FROM ws_tickets WHERE expires_at <= ?", now);
    this.sql.exec(
      "INSERT INTO ws_tickets (ticket_hash, org, user_id, expires_at, key_id) VALUES (?, ?, ?, ?, ?)",
      await hashApiKey(ticket),
      holder.org,
      holder.user,
      now + TICKET_TTL_MS,
      holder.keyId,
    );
    return { ticket, expiresAt: new Date(now + TICKET_TTL_MS).toISOString() };
  }

  /** Consumes the ticket: it works once, before it expires, and never again. */
  async redeem(ticket: string, now = Date.now()): Promise<TicketHolder | null> {
    const row = this.sql
      .exec<Row>(
        "DELETE FROM ws_tickets WHERE ticket_hash = ? RETURNING org, user_id, key_id, expires_at",
        await hashApiKey(ticket),
      )
      .toArray()[0];
    if (!row) return null;
    const held = TicketRow.parse(row);
    if (held.expires_at <= now) return null;
    return { org: held.org, user: held.user_id, keyId: held.key_id };
  }
}

/**
 * The socket door's one refusal: a missing, made-up, used or expired ticket, and a session that does not
 * exist (or belongs to another org), all answer exactly this, so the door tells nobody which sessions exist.
 */
export function invalidTicketResponse(): Response {
  return errorResponse("invalid_ticket", "The WebSocket ticket is missing, unknown, already used or expired.");
}

export function upgradeRequiredResponse(): Response {
  return errorResponse("upgrade_required", "Expected a WebSocket upgrade request.");
}

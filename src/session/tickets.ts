// Single-use WebSocket tickets: a key-authenticated caller gets one; a browser passes it as ?ticket=.
// Only the ticket's hash is stored, in the session's own storage, so a ticket opens this session only.
import { hashApiKey } from "../auth/api-keys";
import { errorResponse } from "../errors";

export const TICKET_TTL_MS = 60_000;

type Row = Record<string, SqlStorageValue>;

export interface TicketHolder {
  org: string;
  user: string;
  /** The key that asked for the ticket: the socket's turns draw on its model call budget. */
  keyId: string;
}

export class TicketStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(
      "CREATE TABLE IF NOT EXISTS ws_tickets (ticket_hash TEXT PRIMARY KEY, org TEXT NOT NULL, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL, key_id TEXT NOT NULL DEFAULT '')",
    );
    // Sessions created before tickets carried the key id: the column is added in place.
    const columns = sql.exec<Row>("PRAGMA table_info(ws_tickets)").toArray();
    if (!columns.some((c) => c.name === "key_id")) {
      sql.exec("ALTER TABLE ws_tickets ADD COLUMN key_id TEXT NOT NULL DEFAULT ''");
    }
  }

  async issue(holder: TicketHolder, now = Date.now()): Promise<{ ticket: string; expiresAt: string }> {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const ticket = `wst_${btoa(String.fromCharCode(...bytes))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "")}`;
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
    if (!row || Number(row.expires_at) <= now) return null;
    return { org: String(row.org), user: String(row.user_id), keyId: String(row.key_id) };
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

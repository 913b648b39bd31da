// What a person (or retention) does to a whole session: rename and archive it (its list entry, D1), export it, and
// delete it for good: its turn stopped, its sockets closed, its list entry and every byte of its storage deleted
// (its alarm too). Usage rows stay, for accounting: they hold no text of the conversation (those still kept in the
// object's usage outbox are written to D1 before its storage goes). Only the owner or an
// admin of the org may change or delete a session; anyone else gets the same 404 as for no session.
import type { Db } from "../db";
import { usageInserts } from "../metering/usage-records";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { type Outcome, sessionNotFound } from "../refusal";
import { mayActOnSession } from "../tenancy/ownership";
import type { SessionListEntry } from "../wire/session";
import type { Caller } from "./caller";
import type { FrameHub } from "./frame-hub";
import { firstMessageTitle } from "./list-writer";
import { type ExportFile, type ExportFormat, exportFile, sessionExport } from "./session-export";
import { changeSessionEntry, type EntryChange, sessionEntry, touchSessionEntry, unindexSession } from "./session-index";
import type { SessionStore } from "./session-store";
import type { TurnDriver } from "./turn-driver";
import type { UsageOutbox } from "./usage-outbox";

/** The close code a socket of a deleted session is closed with (4000-4999: the application's own). */
export const SESSION_DELETED_CLOSE_CODE = 4404;

export interface SessionKeeperDeps {
  ctx: DurableObjectState;
  store: SessionStore;
  db: Db;
  driver: TurnDriver;
  frames: FrameHub;
  logger: JsonAdminLogger;
  usage: UsageOutbox;
}

/** What retention did with a session: deleted it (or found it gone already), or kept it (not idle after all). */
export type Expiry = "deleted" | "kept";

export class SessionKeeper {
  /** The session is being deleted: every door answers as for no session from the first moment. */
  private deleting = false;

  constructor(private readonly deps: SessionKeeperDeps) {}

  /** The session is deleted, or being deleted (or was never created). */
  gone(): boolean {
    return this.deleting || this.deps.store.record() === null;
  }

  /**
   * This object deleted its session (while it stays in memory): nothing may create a session in it again. Once the
   * object is evicted its storage is empty like a new object's; ids are random, so nothing asks to create one again.
   */
  deleted(): boolean {
    return this.deleting;
  }

  async delete(caller: Caller): Promise<Outcome<{ sessionId: string; deleted: true }>> {
    const refused = this.refusalToManage(caller);
    if (refused) return refused;
    const sessionId = this.sessionId();
    await this.erase();
    return { ok: true, value: { sessionId, deleted: true } };
  }

  /** A person's title (null: the automatic one again) and archived state; the entry as the list now shows it. */
  async change(caller: Caller, change: EntryChange): Promise<Outcome<SessionListEntry>> {
    const refused = this.refusalToManage(caller);
    if (refused) return refused;
    const { store, db } = this.deps;
    const sessionId = this.sessionId();
    await changeSessionEntry(db, sessionId, change, change.title === null ? firstMessageTitle(store) : null);
    const entry = await sessionEntry(db, sessionId);
    // A session whose list entry was never written (D1 failed when it was made) has nothing to change.
    return entry ? { ok: true, value: entry } : sessionNotFound(sessionId);
  }

  /** The whole session in `format`, read from storage in this one call. */
  async export(format: ExportFormat): Promise<ExportFile> {
    const listed = await sessionEntry(this.deps.db, this.sessionId());
    return exportFile(sessionExport(this.deps.store, listed), format);
  }

  /**
   * Retention: deletes the session if it has been idle since before `cutoff` (an ISO time) by its own record (the
   * list may lag). One that changed since is kept, and its list entry's idle time corrected; a list entry without a
   * session (deleted, its entry left by a failed write) is removed.
   */
  async expire(cutoff: string): Promise<Expiry> {
    if (this.deleting) return "kept";
    const record = this.deps.store.record();
    if (!record) {
      await unindexSession(this.deps.db, this.deps.ctx.id.toString());
      return "deleted";
    }
    if (record.updatedAt >= cutoff || this.deps.driver.busy()) {
      await touchSessionEntry(this.deps.db, record.sessionId, record.updatedAt);
      return "kept";
    }
    await this.erase();
    this.deps.logger.addCustomEvent("Message", "[Session_Retention]", "An idle session was deleted.", [
      ["SessionId", record.sessionId],
      ["IdleSince", record.updatedAt],
    ]);
    return "deleted";
  }

  /** Anyone but its owner and an admin of its org: not found, as for another org (ids are not confirmed); null: the caller may. */
  private refusalToManage(caller: Caller) {
    const record = this.deps.store.record();
    if (this.deleting || !record || !mayActOnSession(caller, record))
      return sessionNotFound(this.deps.ctx.id.toString());
    return null;
  }

  private sessionId(): string {
    return this.deps.store.identity().sessionId;
  }

  /**
   * The turn that runs is stopped first (it writes its end), then the list entry goes (a failure there leaves the
   * session as it was, to be deleted again), the sockets are told and closed, and the storage is deleted.
   */
  private async erase(): Promise<void> {
    const { ctx, store, db, driver, frames, usage } = this.deps;
    const sessionId = this.sessionId();
    this.deleting = true;
    try {
      await driver.stop();
      // The usage rows not yet in D1 (the stopped turn's, mostly) are written before the storage that keeps them goes.
      for (let rows = usage.kept(); rows.length > 0; rows = usage.kept()) {
        await db.batch(usageInserts(db, rows));
        usage.written(rows);
      }
      await unindexSession(db, sessionId);
    } catch (error) {
      this.deleting = false;
      throw error;
    }
    const message = `Session ${sessionId} was deleted.`;
    for (const ws of ctx.getWebSockets()) {
      frames.sendDirect(ws, { type: "error", code: "session_not_found", message });
      try {
        ws.close(SESSION_DELETED_CLOSE_CODE, "The session was deleted.");
      } catch {
        // Closed on the other side already.
      }
    }
    await store.erase();
  }
}

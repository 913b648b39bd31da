// The one way a route writes its change to the audit log: as the request's caller, with its request id, before the
// answer that reports the change goes out. A change D1 holds is written in one batch with its row (`changeRow`),
// so the two stand or fall together; a change elsewhere (the org meter's budget) is recorded after it.
import type { AppContext } from "../http";
import { type AuditChange, auditStatement, recordAudit } from "../tenancy/audit-log";

/** The statement that appends `change`, for the batch that makes it. */
export function changeRow(c: AppContext, change: AuditChange): D1PreparedStatement {
  return auditStatement(c.get("db"), { principal: c.get("principal"), requestId: c.get("requestId") }, change);
}

/** Appends `change` on its own (for a change D1 does not hold). */
export function recordChange(c: AppContext, change: AuditChange): Promise<void> {
  return recordAudit(c.get("db"), { principal: c.get("principal"), requestId: c.get("requestId") }, change);
}

// The one way a route writes its change to the audit log: as the request's caller, with its request id, before the
// answer that reports the change goes out.
import type { AppContext } from "../http";
import { type AuditChange, recordAudit } from "../tenancy/audit-log";

export function recordChange(c: AppContext, change: AuditChange): Promise<void> {
  return recordAudit(c.var.db, { principal: c.var.principal, requestId: c.var.requestId }, change);
}

// Who calls a session object: the org that owns sessions, the user, and the key whose model call budget a turn
// draws on; and the log lines a call writes.
import type { JsonAdminLogger } from "../observability/admin-logger";

export interface Caller {
  org: string;
  user: string;
  keyId: string;
  /** The caller is an admin of its org: it may read and act on any session of its org, not only its own. */
  admin?: boolean;
  /** The Worker's request id, carried into the object's log lines. */
  requestId?: string;
  /** The D1 bookmark the Worker's request had reached: the object's reads are at least as new (src/db.ts). */
  bookmark?: string | null;
  /**
   * The client sent a bookmark: it reads its own writes (a mode it just changed), so its turn reads the mode and
   * the base prompt from D1 rather than from the isolate's kept copy (MODES_CACHE_MS).
   */
  bookmarkSent?: boolean;
  /**
   * The W3C trace context of the caller's request (`traceparent`, `tracestate`), when it is traced: a Durable
   * Object's RPC call carries no context of its own, so the object's spans continue the request's trace from this.
   */
  trace?: Record<string, string>;
  /**
   * The request is an eval's (the runner's `x-aptix-eval` header, an org admin's alone): the turn's usage rows say
   * `eval`, so evals are metered apart from people's turns (docs/evals.md).
   */
  eval?: boolean;
}

/** The object's logger, with the caller's request and key on every line (the object's own lines without one). */
export function callLogger(logger: JsonAdminLogger, caller?: Caller): JsonAdminLogger {
  return caller?.requestId ? logger.with({ requestId: caller.requestId, keyId: caller.keyId }) : logger;
}

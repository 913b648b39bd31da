// The Worker's side of sessions: finding a session's object, and AgentSessionManager over RPC.

import { BOOKMARK_HEADER } from "../db";
import { ApiError } from "../errors";
import { EVAL_HEADER } from "../evals/eval-http";
import type { AppContext } from "../http";
import { traceCarrier } from "../observability/tracing/tracing";
import { type Outcome, sessionNotFound } from "../refusal";
import { holdsScope } from "../tenancy/roles";
import type { AgentSessionManager } from "../tools/session-manager";
import type { SessionView } from "../wire/session";
import type { AgentSession, SessionInit } from "./agent-session";
import type { Caller } from "./caller";
import { locationHintFor } from "./location-hint";

const SESSION_ID = /^[0-9a-f]{64}$/;

/** The session's object, or null for an id that cannot be one (the object checks the org itself). */
export function sessionStubOrNull(env: Cloudflare.Env, sessionId: string): DurableObjectStub<AgentSession> | null {
  if (!SESSION_ID.test(sessionId)) return null;
  try {
    return env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
  } catch {
    // Not an id of this namespace: answered like every unknown session.
    return null;
  }
}

/** The session's object, or a 404 for an id that cannot be one (the object checks the org itself). */
export function sessionStub(env: Cloudflare.Env, sessionId: string): DurableObjectStub<AgentSession> {
  const stub = sessionStubOrNull(env, sessionId);
  if (stub) return stub;
  throw ApiError.from(sessionNotFound(sessionId));
}

/**
 * A new session's object, initialised for the principal in `mode` and placed by `locationHint` (near the
 * user, src/session/location-hint.ts); its view. A branch a person starts is seeded with its source's conversation;
 * a schedule's run titles its session by the schedule's name (the list's automatic title then never replaces it); a
 * session pinned to a mode version (evals) keeps that version's snapshot.
 */
export async function createSession(
  env: Cloudflare.Env,
  owner: { org: string; user: string },
  mode: string,
  locationHint?: DurableObjectLocationHint,
  branch?: SessionInit["branch"],
  title?: string,
  pin?: SessionInit["pin"],
): Promise<SessionView> {
  const id = env.AGENT_SESSION.newUniqueId();
  return env.AGENT_SESSION.get(id, placement(locationHint)).initialize({
    sessionId: id.toString(),
    org: owner.org,
    user: owner.user,
    mode,
    parentSessionId: null,
    ...(branch ? { branch } : {}),
    ...(title ? { title } : {}),
    ...(pin ? { pin } : {}),
  });
}

/** The options that place a new object by `locationHint` (none without one). */
export function placement(
  locationHint: DurableObjectLocationHint | undefined,
): DurableObjectNamespaceGetDurableObjectOptions | undefined {
  return locationHint ? { locationHint } : undefined;
}

/** Where the request's user is, as the location hint for a session it creates. */
export function hintOf(c: AppContext): DurableObjectLocationHint | undefined {
  const cf = c.req.raw.cf;
  return locationHintFor({
    continent: typeof cf?.continent === "string" ? cf.continent : null,
    country: typeof cf?.country === "string" ? cf.country : null,
    longitude: typeof cf?.longitude === "string" ? cf.longitude : null,
  });
}

/** The request's principal as a session object's caller. */
export function callerOf(c: AppContext): Caller {
  const { org, user, keyId, scopes } = c.get("principal");
  const trace = traceCarrier();
  const evaluating = evalRequest(c);
  return {
    ...(evaluating ? { eval: true } : {}),
    ...(trace.traceparent ? { trace } : {}),
    org,
    user,
    keyId,
    admin: holdsScope(scopes, "admin"),
    requestId: c.get("requestId"),
    bookmark: c.get("db").getBookmark(),
    bookmarkSent: Boolean(c.req.header(BOOKMARK_HEADER)),
  };
}

/**
 * Whether the request is an eval runner's (`x-aptix-eval: 1`): only an org admin may meter turns as evals, so
 * anyone else sending the header is refused rather than ignored (their turns would be counted apart otherwise).
 */
function evalRequest(c: AppContext): boolean {
  const header = c.req.header(EVAL_HEADER);
  if (header === undefined) return false;
  if (!holdsScope(c.get("principal").scopes, "admin")) {
    throw new ApiError("insufficient_scope", `Only an org admin may send ${EVAL_HEADER} (eval runs are theirs).`, {
      param: EVAL_HEADER,
    });
  }
  return true;
}

/** A session's refusal becomes the one OpenAI-shaped error; a value passes through. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw ApiError.from(outcome);
}

/** For tools the Worker holds (to describe them): mode changes go to the session's own object. */
export class DurableObjectSessionManager implements AgentSessionManager {
  constructor(private readonly env: Cloudflare.Env) {}

  async setSessionMode(sessionId: string, mode: string, reason: string, org: string, user: string): Promise<void> {
    await sessionStub(this.env, sessionId).setSessionMode(sessionId, mode, reason, org, user);
  }
}

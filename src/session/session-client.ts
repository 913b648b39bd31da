// The Worker's side of sessions: finding a session's object, and AgentSessionManager over RPC.

import { ApiError } from "../errors";
import type { AppContext } from "../http";
import { type Outcome, sessionNotFound } from "../refusal";
import type { AgentSession, Caller, SessionView } from "./agent-session";
import type { AgentSessionManager } from "./session-manager";

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

/** A new session's object, initialised for the principal in `mode`; its view. */
export async function createSession(
  env: Cloudflare.Env,
  owner: { org: string; user: string },
  mode: string,
): Promise<SessionView> {
  const id = env.AGENT_SESSION.newUniqueId();
  return env.AGENT_SESSION.get(id).initialize({
    sessionId: id.toString(),
    org: owner.org,
    user: owner.user,
    mode,
    parentSessionId: null,
  });
}

/** The request's principal as a session object's caller. */
export function callerOf(c: AppContext): Caller {
  const { org, user, keyId } = c.var.principal;
  return { org, user, keyId, requestId: c.var.requestId };
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

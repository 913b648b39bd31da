// AgentSessionManager: the one way a tool changes a session (TUL-007 §3.5); the session object implements it.

/** TUL-007's `IAgentSessionManager.SetSessionMode(sessionId, mode, reason, org, user)`. */
export interface AgentSessionManager {
  setSessionMode(sessionId: string, mode: string, reason: string, org: string, user: string): Promise<void>;
}

/** A refusal whose message is safe to show to the model (an unknown mode, say), unlike an unexpected error. */
export class SessionModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionModeError";
  }
}

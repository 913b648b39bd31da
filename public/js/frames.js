// @ts-check
// The frames the server writes to a session's event log before it sends them (a reconnect replays these).
// The server's list is derived from its schemas (src/wire.ts, LOGGED_FRAME_TYPES); a test keeps this one equal.

export const LOGGED_FRAME_TYPES = /** @type {const} */ ([
  "turn_started",
  "assistant_delta",
  "assistant_restarted",
  "tool_call_started",
  "tool_call_completed",
  "approval_required",
  "client_tool_required",
  "mode_changed",
  "elicitation_required",
  "elicitation_answered",
  "turn_completed",
]);

// The one-turn-at-a-time rule and the checks on approvals and client results, as refusals (codes, not statuses).
import { quoted } from "../quote";
import { type Refusal, refuse } from "../refusal";
import type { SessionStatus } from "../wire/turn";
import type { StoredToolCall } from "./agent-tool-call";

/** Why a session in `status` cannot take what needs it `expected`, or null when it can. */
export function refusalUnless(status: SessionStatus, expected: SessionStatus): Refusal | null {
  if (status === expected) return null;
  if (status === "running") return refuse("session_busy", "The session is running a turn; wait for it to finish.");
  if (expected === "idle") {
    const what =
      status === "awaiting_approval"
        ? "approval of its pending tool calls"
        : "results of its client-executed tool calls";
    return refuse(
      "session_awaiting_input",
      `The session is waiting for ${what}; answer them before sending a new message.`,
    );
  }
  return refuse(
    "nothing_pending",
    `The session is not waiting for ${expected === "awaiting_approval" ? "approvals" : "tool results"}.`,
  );
}

/** Refuses ids named twice, unknown to the turn, or not in `state` (a stale or settled call). */
export function refusalForCalls(
  calls: StoredToolCall[],
  ids: string[],
  state: StoredToolCall["state"],
): Refusal | null {
  const seen = new Set<string>();
  // The request's list: approvals are decisions, a client's results are results.
  const list = state === "awaiting_approval" ? "decisions" : "results";
  for (const [index, id] of ids.entries()) {
    if (seen.has(id))
      return refuse("duplicate_tool_call_id", `Tool call ${quoted(id)} appears twice in the request.`, {
        param: `${list}.${index}.toolCallId`,
      });
    seen.add(id);
    const call = calls.find((c) => c.id === id);
    if (!call || call.state !== state) {
      return refuse(
        "tool_call_not_pending",
        `Tool call ${quoted(id)} is unknown or already settled; nothing was changed.`,
      );
    }
  }
  return null;
}

// Approvals in plain words, for clients that know only chat messages (the agent's OpenAI door): a paused
// turn is answered with a message listing the calls that wait and how to answer, and the user's next message
// decides. The rule: "yes" (or approve, ok, sure, go ahead) approves every call; "no" (or deny, stop, cancel)
// denies every call, the message being the reason; anything else denies them too and reaches the model as
// what the user said instead, so the agent takes it as the next instruction.

import type { ApprovalDecision } from "../wire/session";
import type { AgentToolCall } from "../wire/turn";

const YES = /^\s*(yes|y|approve|approved|ok|okay|sure|go ahead|do it)\b/i;
const NO = /^\s*(no|n|deny|denied|stop|cancel|don't|do not)\b/i;

const ARGUMENT_CHARS = 300;

/** The message that asks: each call with its arguments (and its MCP server), then how to answer. */
export function approvalRequest(calls: readonly AgentToolCall[]): string {
  const lines = calls.map((call, i) => {
    const where = call.mcp ? ` (tool ${call.mcp.tool} of MCP server ${call.mcp.server})` : "";
    const args =
      call.argumentsJson.length > ARGUMENT_CHARS
        ? `${call.argumentsJson.slice(0, ARGUMENT_CHARS)}…`
        : call.argumentsJson;
    return `${i + 1}. ${call.name}${where} with ${args}`;
  });
  const these = calls.length === 1 ? "this tool call" : `these ${calls.length} tool calls`;
  return [
    `I need your approval for ${these}:`,
    ...lines,
    "",
    'Reply "yes" to approve, or "no" to deny (anything after "no" is passed on as your reason). Any other reply denies and is taken as your next instruction.',
  ].join("\n");
}

/** The decisions a reply makes for every call that waits. */
export function decisionsFromWords(reply: string, waiting: readonly { id: string }[]): ApprovalDecision[] {
  const text = reply.trim();
  if (YES.test(text)) return waiting.map((call) => ({ toolCallId: call.id, approved: true }));
  const reason = NO.test(text) ? text : `The user did not approve and said instead: ${text}`;
  return waiting.map((call) => ({ toolCallId: call.id, approved: false, reason: reason.slice(0, 2_000) }));
}

// Whether a turn may start or go on, decided in one place for every door (HTTP, SSE, the WebSocket, the agent's
// OpenAI, Responses and Messages doors, workflows, and the decisions and client results that resume a paused
// turn): admit() answers a refusal, or an admission that holds the session and carries the one AgentReasoner the
// turn then runs with (so a check that reads the mode, as the image check does, reads it for the turn too).
import type { AgentReasoner, FirstCall } from "../agent/agent-reasoner";
import { refusalUnless } from "../agent/turn-gate";
import { refusalForApprovals, refusalForToolResults } from "../agent/turn-status";
import type { TurnStore } from "../agent/turn-store";
import { quoted } from "../quote";
import { type Outcome, type Refusal, refuse } from "../refusal";
import type { MessageAttachment } from "../wire/attachments";
import type { ApprovalDecision, ClientToolResult } from "../wire/session";
import type { PendingElicitation, SessionStatus } from "../wire/turn";

/** What a door asks of the session. */
export type TurnAsk =
  | { kind: "message"; content: string; attachments: readonly MessageAttachment[] }
  | { kind: "approvals"; decisions: ApprovalDecision[] }
  | { kind: "tool_results"; results: ClientToolResult[] }
  /** A workflow runs no loop, but holds the session as a turn does. */
  | { kind: "workflow" };

/**
 * The ask, or how to read a door's input once the session's state is known (the agent's OpenAI door, whose words
 * are a new message or decide the approvals that wait); reading it may refuse.
 */
export type AskFor = TurnAsk | ((status: SessionStatus) => TurnAsk | Refusal);

export interface Admission {
  ask: TurnAsk;
  /** The turn's one reasoner; null for a workflow. */
  reasoner: AgentReasoner | null;
  /** A new message's first model call, paid before anything was stored. */
  first?: FirstCall;
  /** Gives the session back: done by whoever runs the turn once the turn holds it (or ends). Idempotent. */
  release: () => void;
}

/**
 * An admission that will not be driven (what came between it and its turn failed): the session is given back and
 * the first call's reservation settled as unused, so neither the session stays busy nor the budget held.
 */
export function abandon(admission: Admission): void {
  admission.release();
  admission.first?.reservation?.settle(null);
}

/** `step`'s value, done between an admission and its turn; should it throw, the admission is abandoned first. */
export function beforeDrive<T>(admission: Admission, step: () => T): T {
  try {
    return step();
  } catch (error) {
    abandon(admission);
    throw error;
  }
}

/** What admit() reads and asks of the session object (its turn driver). */
export interface AdmissionDeps {
  store: TurnStore;
  /** A turn of this object is starting or running here (storage may still say idle), or another is being admitted. */
  held: () => boolean;
  /** The question an MCP server asked mid-call, waiting for its answer. */
  question: () => PendingElicitation | undefined;
  /** Ends the paused turn if its pause has expired. */
  expirePause: () => void;
  /** Holds the session while the admission's checks run; answers the release. */
  hold: () => () => void;
  /** The reasoner the turn will run with (built once, here). */
  reasoner: () => AgentReasoner;
}

/**
 * The checks, in this order (the first that refuses answers, and nothing is stored):
 * 1. one turn at a time: a turn starting, running, or asking an MCP server's question (`session_busy`,
 *    `session_awaiting_input`); checked first, so a request that is refused changes nothing;
 * 2. a paused turn whose pause has expired is ended (not a refusal: the session then takes a new message, and
 *    decisions or results for the expired turn are refused with `pause_expired` in step 3);
 * 3. what the input means, and whether the session's state fits it: a message or a workflow needs an idle session
 *    (`session_awaiting_input`), decisions and results need a turn paused for them and calls that wait
 *    (`nothing_pending`, `tool_call_not_pending`, `duplicate_tool_call_id`, `pause_expired`);
 * then the session is held, and for a new message:
 * 4. its images need a mode whose route reads images (`attachment_not_accepted`);
 * 5. its first model call is paid: one of the key's model calls (`rate_limit_exceeded`; the agent's OpenAI doors
 *    count it in the Worker, before a new session is made, and the reasoner's budget then knows it is paid) and
 *    its reservation in the org's budget (`budget_exceeded`).
 */
export async function admit(deps: AdmissionDeps, askFor: AskFor): Promise<Outcome<Admission>> {
  const busy = busyRefusal(deps);
  if (busy) return busy;
  deps.expirePause();
  const ask = typeof askFor === "function" ? askFor(deps.store.status()) : askFor;
  if ("ok" in ask) return ask;
  const misfit = stateRefusal(deps.store, ask);
  if (misfit) return misfit;
  const release = deps.hold();
  if (ask.kind === "workflow") return { ok: true, value: { ask, reasoner: null, release } };
  try {
    const reasoner = deps.reasoner();
    if (ask.kind !== "message") return { ok: true, value: { ask, reasoner, release } };
    const refused = await reasoner.attachmentRefusal(ask.attachments);
    if (refused) {
      release();
      return refused;
    }
    const paid = await reasoner.payFirstCall(ask.content, ask.attachments);
    if (!paid.ok) {
      release();
      return paid;
    }
    return { ok: true, value: { ask, reasoner, first: paid.value, release } };
  } catch (error) {
    release();
    throw error;
  }
}

/** Step 1: why nothing new may start while a turn of the session is starting or running. */
function busyRefusal(deps: AdmissionDeps): Refusal | null {
  const status = deps.store.status();
  if (!deps.held() && status !== "running") return null;
  if (status === "idle") return refuse("session_busy", "The session is busy.");
  const question = deps.question();
  if (question) {
    return refuse(
      "session_awaiting_input",
      `The session is waiting for the answer to a question from MCP server ${quoted(question.server)} (elicitation ${question.elicitationId}); answer it or cancel the turn first.`,
    );
  }
  return refusalUnless(status, "idle");
}

/** Step 3: why the session's state does not fit what is asked. */
function stateRefusal(store: TurnStore, ask: TurnAsk): Refusal | null {
  switch (ask.kind) {
    case "message":
    case "workflow":
      return refusalUnless(store.status(), "idle");
    case "approvals":
      return refusalForApprovals(
        store,
        ask.decisions.map((d) => d.toolCallId),
      );
    case "tool_results":
      return refusalForToolResults(
        store,
        ask.results.map((r) => r.toolCallId),
      );
  }
}

// A turn as an A2A task (the SDK's types): a turn's status as the task's state, what the agent said as the task's
// status message and its `answer` artifact, the calls that wait as an input-required message in words (approvals,
// src/session/approval-words.ts) and as data (a client's calls). Pure functions (test/a2a drives them through both bindings).
import { type Artifact, type Message, type Part, Role, type Task, TaskState } from "@a2a-js/sdk";
import { approvalRequest } from "../session/approval-words";
import type { AgentToolCall, TurnStatus } from "../wire/turn";

/** Where a turn is, whichever way it was read (a turn's stored status, or its frames as they stream). */
export interface TurnSnapshot {
  sessionId: string;
  turnId: string;
  status: TurnStatus["status"];
  /** The agent's answer (completed), or its text so far. */
  text: string;
  /** While paused: the calls awaiting approval, and those awaiting the client's results. */
  pending: { approvals: AgentToolCall[]; clientCalls: AgentToolCall[] } | null;
  error: { code: string; message: string } | null;
  /** When its status last changed (ISO). */
  at: string;
}

const STATE: Record<TurnStatus["status"], TaskState> = {
  running: TaskState.TASK_STATE_WORKING,
  paused: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};

/** The states a task does not leave. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export function stateOf(status: TurnStatus["status"]): TaskState {
  return STATE[status] ?? TaskState.TASK_STATE_UNSPECIFIED;
}

/** The turn status a task state filter means (ListTasks' `status`), or null for a state no turn has. */
export function turnStatusOf(state: TaskState): TurnStatus["status"] | null {
  const found = Object.entries(STATE).find(([, value]) => value === state);
  return found ? (found[0] as TurnStatus["status"]) : null;
}

export function textPart(text: string): Part {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

function dataPart(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

export function agentMessage(ids: { sessionId: string; turnId: string }, key: string, parts: Part[]): Message {
  return {
    messageId: `${ids.turnId}-${key}`,
    contextId: ids.sessionId,
    taskId: ids.turnId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** What the client is told while the turn waits: the approvals in words, the client's calls as data. */
function waitingParts(pending: NonNullable<TurnSnapshot["pending"]>): Part[] {
  const parts: Part[] = [];
  const approvals = pending.approvals.filter((call) => call.approval === "pending");
  if (approvals.length > 0) parts.push(textPart(approvalRequest(approvals)));
  if (pending.clientCalls.length > 0) {
    parts.push(
      textPart(
        'The agent waits for your results of these client tool calls: send a message on this task with a data part {"results":[{"toolCallId","resultJson"|"errorMessage"}]}.',
      ),
      dataPart({
        clientToolCalls: pending.clientCalls.map(({ id, name, argumentsJson }) => ({ id, name, argumentsJson })),
      }),
    );
  }
  return parts;
}

/** The status message of a snapshot: what waits, why it failed, or nothing. */
function statusMessage(turn: TurnSnapshot): Message | undefined {
  if (turn.status === "paused" && turn.pending) return agentMessage(turn, "input", waitingParts(turn.pending));
  if (turn.status === "failed" || turn.status === "cancelled") {
    const said = turn.error ? turn.error.message : `The task was ${turn.status}.`;
    return agentMessage(turn, turn.status, [textPart(said)]);
  }
  return undefined;
}

export const ANSWER_ARTIFACT = "answer";

export function answerArtifact(turnId: string, text: string): Artifact {
  return {
    artifactId: `${turnId}-${ANSWER_ARTIFACT}`,
    name: ANSWER_ARTIFACT,
    description: "What the agent answered.",
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
  };
}

/** The task of a turn. */
export function taskOf(turn: TurnSnapshot): Task {
  return {
    id: turn.turnId,
    contextId: turn.sessionId,
    status: { state: stateOf(turn.status), message: statusMessage(turn), timestamp: turn.at },
    artifacts: turn.text ? [answerArtifact(turn.turnId, turn.text)] : [],
    history: [],
    metadata: turn.error ? { errorCode: turn.error.code } : undefined,
  };
}

/** The task's status alone (a status update event's). */
export function statusOf(turn: TurnSnapshot): Task["status"] {
  return taskOf(turn).status;
}

/** A turn's stored status (the session object's turnStatus) as a snapshot. */
export function snapshotOf(status: TurnStatus): TurnSnapshot {
  return {
    sessionId: status.sessionId,
    turnId: status.turnId,
    status: status.status,
    text: status.answer ?? "",
    pending: status.pending,
    error: status.error,
    at: status.endedAt ?? status.startedAt,
  };
}

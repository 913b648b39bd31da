// The session's side of the agent's OpenAI door: what a request's new input does in the session's state (a
// message starts a turn, or decides the approvals that wait in plain words; tool messages are the client's
// results), a new session seeded with the history the client sent, and the answer's text.
import { keyModelCallBudget, prepaidBudget } from "../metering/model-call-limit";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { type Outcome, type Refusal, refuse } from "../refusal";
import type { ChatTool, OpenAIToolCall } from "../wire/openai";
import type { ClientToolResult } from "../wire/session";
import type { AgentExecuteResponse, SessionStatus, TokenUsage } from "../wire/turn";
import { decisionsFromWords } from "./approval-words";
import { type Caller, callLogger } from "./caller";
import { type DoorEnd, doorReply, endedWithoutAnswer, StreamedAnswerText } from "./door-answer";
import type { FrameHub } from "./frame-hub";
import type { TurnReads } from "./session-model";
import type { SessionStore } from "./session-store";
import { headAfter, type Meaning, type ThreadPlace } from "./thread-head";
import { beforeDrive, type TurnAsk } from "./turn-admission";
import { type DriveOptions, startedOrEnded, type TurnDriver } from "./turn-driver";

export interface ChatTurn {
  input:
    | { type: "message"; content: string }
    | { type: "tool_results"; results: { toolCallId: string; text: string }[] };
  /** The history a new session starts from (a client's conversation from elsewhere); only for a new session. */
  seed: Meaning[];
  /** The client's own tools, offered to the model for this request. */
  clientTools: ChatTool[];
  /** The model's mode and the base prompt, read by the Worker as it checked the request. */
  reads: TurnReads;
  /** The Worker counted this request's first model call against the key (and refused it past the limit). */
  prepaid: boolean;
  /** A new session, created by this very request (one call to the object, not two). */
  create?: { org: string; user: string; mode: string };
  /**
   * Where the request leaves the conversation: the session records its head after the answer, before answering
   * (none from a Worker of the version before, which writes the head itself).
   */
  thread?: ThreadPlace;
  /**
   * The head the request's history ends at (our last answer), when it continues this session by its history: the
   * session answers `HEAD_MOVED`, having done nothing, unless that is its head (of the request's key).
   */
  expect?: string;
}

/**
 * The session's head is not the one the request's history ends at (the conversation went on from elsewhere, or it is
 * not this session's): nothing was done, and the Worker finds the history's session anew.
 */
export interface HeadMoved {
  ok: false;
  headMoved: true;
}

export const HEAD_MOVED: HeadMoved = { ok: false, headMoved: true };

export interface ChatTurnAnswer {
  response: AgentExecuteResponse;
  /** What the agent said in this request (each model response's text, in order). */
  content: string;
  /** The calls that wait for the client's results now. */
  waitingForClient: string[];
  /** The answer as the client reads it: the text (then an approval request in words) and the client's tool calls. */
  reply: { content: string; toolCalls: OpenAIToolCall[] };
  /** The conversation's head after this answer, recorded (null when the turn ended without an answer). */
  head: string | null;
  /** D1's agent_threads took the head (else the session alone keeps it: the failed write is logged). */
  headWritten: boolean;
  /** The turn this request drove (still waiting for the client, or ended). */
  turnId: string | null;
  /** The tokens of this request's model calls (a resumed turn's earlier requests not counted again). */
  usage?: TokenUsage;
}

/**
 * What a session object of the version before answers (for the few minutes of a deploy when a Worker and an object of
 * different versions talk): neither the reply nor the head, which the Worker then makes itself. Its `content` and
 * `waitingForClient` are kept in ChatTurnAnswer for a Worker of the version before.
 */
export type ChatTurnAnswerBefore = Omit<ChatTurnAnswer, "reply" | "head" | "headWritten">;

/** What a paused turn had used before this request resumes it; nothing for a turn this request starts. */
export function usageBefore(store: SessionStore): TokenUsage | undefined {
  const status = store.status();
  return status === "awaiting_approval" || status === "awaiting_client" ? store.turn()?.usage : undefined;
}

/** The tokens used since `before`: a whole turn's, or the part of it one request drove. */
export function usageSince(before: TokenUsage | undefined, now: TokenUsage | undefined): TokenUsage | undefined {
  if (!now || !before) return now;
  return {
    promptTokens: now.promptTokens - before.promptTokens,
    completionTokens: now.completionTokens - before.completionTokens,
    totalTokens: now.totalTokens - before.totalTokens,
  };
}

/** A result as the loop takes it: JSON, so a plain-text result is sent as a JSON string. */
function resultJson(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

/** What the input asks of the session in its state now (words decide the approvals that wait), or why it cannot. */
export function chatTurnAsk(turn: ChatTurn, status: SessionStatus, store: SessionStore): TurnAsk | Refusal {
  const { input } = turn;
  if (input.type === "message") {
    if (status === "awaiting_approval") {
      const waiting = store.pendingToolCalls().filter((c) => c.state === "awaiting_approval");
      return { kind: "approvals", decisions: decisionsFromWords(input.content, waiting) };
    }
    if (status === "awaiting_client") {
      const ids = store.pendingToolCalls().map((c) => c.id);
      return refuse(
        "session_awaiting_input",
        `The session waits for the results of the tool calls ${ids.join(", ")}: send them as role 'tool' messages first.`,
      );
    }
    return { kind: "message", content: input.content, attachments: [] };
  }
  const results: ClientToolResult[] = input.results.map((r) => ({
    toolCallId: r.toolCallId,
    resultJson: resultJson(r.text),
  }));
  return { kind: "tool_results", results };
}

/** A new session's conversation starts with the client's history (tool exchanges as notes in the text). */
export function seedConversation(store: SessionStore, seed: readonly Meaning[]): void {
  if (seed.length === 0 || store.lastMessageSeq() > 0) return;
  for (const meaning of seed) {
    if (meaning.role === "user") {
      store.appendMessage({ turnId: "seed", role: "user", content: meaning.text, kind: "message" });
    } else if (meaning.role === "assistant") {
      const calls = meaning.calls.map((c) => `[called ${c.name} with ${c.arguments}]`);
      const content = [meaning.text, ...calls].filter(Boolean).join("\n");
      store.appendMessage({ turnId: "seed", role: "assistant", content, kind: "answer" });
    } else if (meaning.role === "tool") {
      store.appendMessage({
        turnId: "seed",
        role: "assistant",
        content: `[result of call ${meaning.toolCallId}: ${meaning.text}]`,
        kind: "answer",
      });
    }
  }
}

/** The text of the assistant messages written since `afterSeq`, in order. */
export function textSince(store: SessionStore, afterSeq: number): string {
  return store
    .messagesAfter(afterSeq)
    .filter((m) => m.role === "assistant" && m.content)
    .map((m) => m.content ?? "")
    .join("\n\n");
}

export function lastSeq(store: SessionStore): number {
  return store.lastMessageSeq();
}

export interface ChatTurnsDeps {
  env: Cloudflare.Env;
  store: SessionStore;
  frames: FrameHub;
  driver: TurnDriver;
  logger: JsonAdminLogger;
  /** A new session's record, written in this call; its row in the org's index when the promise settles. */
  create: (init: { org: string; user: string; mode: string }) => Promise<void>;
  /**
   * Records the conversation's head (kept by the session, and written to D1 with its list entry, in one write);
   * resolves once written, with whether D1 took it.
   */
  recordHead: (thread: ThreadPlace, head: string) => Promise<boolean>;
  /** Whether `head` is the session's head of `keyId`'s conversation. */
  headIs: (keyId: string, head: string) => Promise<boolean>;
  waitUntil: (work: Promise<unknown>) => void;
}

const usageField = (usage: TokenUsage | undefined) => (usage ? { usage } : {});

/** A door answer's head as the session recorded it. */
interface RecordedHead {
  head: string | null;
  headWritten: boolean;
}

/** The names of the client's own tools in this request. */
const clientToolNames = (turn: ChatTurn) => new Set(turn.clientTools.map((t) => t.function.name));

/** The OpenAI door's entry into the session: a request's input driven as a turn, answered whole or as its frames. */
export class ChatTurns {
  constructor(private readonly deps: ChatTurnsDeps) {}

  /**
   * A door request that starts a session creates it here, in the same call; its index row is written meanwhile. Then
   * the caller's ownership is checked (`owned`), as for every call.
   */
  createIfNew(turn: ChatTurn): Promise<void> {
    if (!turn.create || this.deps.store.record()) return Promise.resolve();
    return this.deps.create(turn.create);
  }

  /** The turn's answer: the response, what the agent said in this request, the calls that wait for the client. */
  async turn(caller: Caller, turn: ChatTurn, indexed: Promise<void>): Promise<Outcome<ChatTurnAnswer>> {
    const { store, driver } = this.deps;
    const options = this.prepare(caller, turn);
    const admitted = await driver.admit((status) => chatTurnAsk(turn, status, store), options);
    if (!admitted.ok) {
      await indexed;
      return admitted;
    }
    // Read once admitted: a pause that expired was ended by the admission.
    const before = usageBefore(store);
    const afterSeq = lastSeq(store);
    const [outcome] = await Promise.all([driver.drive(admitted.value, options), indexed]);
    if (!outcome.ok) return outcome;
    const response = outcome.value;
    const waitingForClient = store
      .pendingToolCalls()
      .filter((c) => c.state === "awaiting_client")
      .map((c) => c.id);
    const content = textSince(store, afterSeq);
    const reply = doorReply(response, content, waitingForClient, clientToolNames(turn));
    // Read before the head's write: another turn may start while it is under way.
    const turnId = store.turn()?.turnId ?? store.lastTurnOutcome()?.turnId ?? null;
    const recorded = await this.recordHead(turn, response, reply.content, reply.toolCalls);
    return {
      ok: true,
      value: {
        response,
        content,
        waitingForClient,
        reply,
        ...recorded,
        turnId,
        ...usageField(usageSince(before, response.usage)),
      },
    };
  }

  /** The same, answered as the stream of frames it logs (SSE); the admission's refusals come before the stream opens. */
  async stream(caller: Caller, turn: ChatTurn, indexed: Promise<void>): Promise<Outcome<ReadableStream<Uint8Array>>> {
    const { store, driver, frames } = this.deps;
    const options = this.prepare(caller, turn);
    const admitted = await driver.admit((status) => chatTurnAsk(turn, status, store), options);
    if (!admitted.ok) return admitted;
    // Read once admitted: a pause that expired was ended by the admission.
    const before = usageBefore(store);
    // The answer as the client reads it, from the very frames its stream carries: the head covers what it was shown.
    const answer = new StreamedAnswerText(clientToolNames(turn));
    const stream = beforeDrive(admitted.value, () => frames.openEventStream(undefined, (frame) => answer.see(frame)));
    const wait = admitted.value.ask.kind === "message" ? driver.nextStart() : null;
    const running = driver.drive(admitted.value, options);
    const done = running
      .then(async (outcome) => {
        // The turn's frames are all out: frames after them (another turn's, started meanwhile) are not this answer's.
        stream.detach();
        if (!outcome.ok) return stream.error(outcome.code, outcome.message);
        // The answer ends once the new session is in its org's index too, and its head is recorded.
        await indexed;
        const recorded = await this.recordHead(turn, outcome.value, answer.content, answer.toolCalls);
        const end: DoorEnd = {
          type: "door_usage",
          usage: usageSince(before, outcome.value.usage) ?? null,
          ...recorded,
        };
        return stream.direct(end);
      })
      .catch(() => stream.error("internal_error", "The turn failed unexpectedly; send the message again."))
      .finally(() => indexed.finally(() => stream.close()));
    this.deps.waitUntil(done);
    // A new message's stream opens once the message is stored. The drive's own end is awaited, not the stream's:
    // nothing reads the stream before it is returned. A turn refused before it stored the message (a guardrail's
    // block) is answered as the refusal it is, before any stream, as the admission's are; its stream is let go.
    if (wait && !(await startedOrEnded(wait, running))) {
      const outcome = await running.catch(() => null);
      if (outcome && !outcome.ok) {
        await stream.readable.cancel().catch(() => {});
        return outcome;
      }
    }
    return { ok: true, value: stream.readable };
  }

  /**
   * The request continues the session by a history that does not end at its head (of the request's key). Asked
   * before the caller's ownership: another's session has another key's head, and answers as a moved one does.
   */
  async moved(turn: ChatTurn): Promise<boolean> {
    if (turn.expect === undefined || !turn.thread) return false;
    return !(await this.deps.headIs(turn.thread.keyId, turn.expect));
  }

  /** The conversation's head after an answer, recorded before the answer goes out; none for a turn that failed. */
  private async recordHead(
    turn: ChatTurn,
    response: AgentExecuteResponse,
    content: string,
    toolCalls: readonly OpenAIToolCall[],
  ): Promise<RecordedHead> {
    if (!turn.thread || endedWithoutAnswer(response)) return { head: null, headWritten: false };
    const head = await headAfter(turn.thread, content, toolCalls);
    return { head, headWritten: await this.deps.recordHead(turn.thread, head) };
  }

  /**
   * A new session's conversation is seeded with the client's history (before the admission, which prices the first
   * call with it), and the request's options: the client's tools, the reads the Worker made, the key's first call
   * when the Worker counted it.
   */
  private prepare(caller: Caller, turn: ChatTurn): DriveOptions {
    const { store, env } = this.deps;
    seedConversation(store, turn.seed);
    const logger = callLogger(this.deps.logger, caller);
    const budget = keyModelCallBudget(env.MODEL_CALL_LIMITER, caller.keyId, logger);
    return {
      caller,
      clientTools: turn.clientTools,
      declineElicitations: true,
      reads: turn.reads,
      ...(turn.prepaid ? { budget: prepaidBudget(budget) } : {}),
    };
  }
}

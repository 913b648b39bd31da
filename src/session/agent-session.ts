// AgentSession: one Durable Object per agent session. It owns the session's mode, conversation, pending
// tool calls, mode history and event log in its SQLite storage, runs the agent loop and executes server
// tools itself, and serves the session's WebSockets (hibernation API) and SSE streams.
import { DurableObject } from "cloudflare:workers";
import { AgentReasoner, type AgentReasonerDeps } from "../agent/agent-reasoner";
import type { AgentExecuteResponse, PendingElicitation } from "../agent/agent-tool-call";
import type { ModelCallBudget } from "../agent/model-call-budget";
import { turnResponse } from "../agent/turn-ending";
import type { TurnEvents } from "../agent/turn-events";
import type { TokenUsage } from "../agent/turn-store";
import { BookmarkedDb } from "../db";
import type { ChatTool } from "../llm/chat-model";
import { McpToolSource } from "../mcp/mcp-tool-source";
import { keyModelCallBudget, prepaidBudget, takeModelCall } from "../metering/model-call-limit";
import { orgTurnMeter, turnUsageRecorder } from "../metering/turn-meter";
import { catalogKnowing, D1AgentModeCatalogService, unknownModeMessage } from "../modes/catalog-service";
import { JsonAdminLogger } from "../observability/admin-logger";
import { quoted } from "../quote";
import { type Outcome, type Refusal, refuse, sessionNotFound } from "../refusal";
import { envRouter } from "../routing/env-router";
import { settings } from "../settings";
import { createAgentToolRegistry } from "../tools";
import { clientFunctionTool } from "../tools/client-function-tool";
import type { ElicitationAnswer } from "../tools/elicitation";
import type { ApprovalDecision, ClientToolResult } from "../wire";
import {
  type DoorAnswer,
  type DoorTurn,
  doorAction,
  lastSeq,
  seedConversation,
  textSince,
  usageBefore,
  usageSince,
} from "./agent-door";
import { ElicitationDesk } from "./elicitations";
import { EventLog } from "./event-log";
import { FrameHub } from "./frame-hub";
import { type DirectFrame, type LoggedFrame, parseClientFrame, type SessionStateFrame } from "./protocol";
import { indexSession, sessionTitle, updateSessionIndex } from "./session-index";
import { type AgentSessionManager, SessionModeError } from "./session-manager";
import { sessionBasePrompt, type TurnReads } from "./session-model";
import { SessionStore } from "./session-store";
import { type SessionView, sessionStateFrame, sessionView } from "./session-view";
import { invalidTicketResponse, TicketStore, upgradeRequiredResponse } from "./tickets";
import { runWorkflow, type WorkflowRunResponse } from "./workflow-runner";

export type { SessionView } from "./session-view";

export interface SessionInit {
  sessionId: string;
  org: string;
  user: string;
  mode: string;
  parentSessionId: string | null;
}

/** Who is asking: the org that owns sessions, the user, and the key whose model call budget a turn draws on. */
export interface Caller {
  org: string;
  user: string;
  keyId: string;
  /** The Worker's request id, carried into the object's log lines. */
  requestId?: string;
  /** The D1 bookmark the Worker's request had reached: the object's reads are at least as new (src/db.ts). */
  bookmark?: string | null;
}

/** Frames after which the session's entry in its owner's list is rewritten (besides any change of status or mode). */
const LISTED_CHANGES: ReadonlySet<string> = new Set([
  "turn_started",
  "elicitation_required",
  "elicitation_answered",
  "mode_changed",
  "turn_completed",
]);

/** How long the list entry's write waits for further changes to carry. */
const LIST_WRITE_DELAY_MS = 100;

/** The list's title for a session: from its first message from the user; null before there is one. */
function firstMessageTitle(store: SessionStore): string | null {
  const first = store.messages().find((m) => m.role === "user" && m.kind === "message" && m.content);
  return first?.content ? sessionTitle(first.content) : null;
}

/** What a hibernated socket remembers: whose it is, and the newest frame logged when it connected. */
interface SocketAttachment extends Caller {
  connectedAtSeq: number;
}

interface DriveOptions {
  caller?: Caller;
  clientMessageId?: string | null;
  /** The budget to draw on, when the caller's first model call was already counted. */
  budget?: ModelCallBudget;
  /** The client's own tools for this request (the OpenAI door); the mode's client-final tools are left out. */
  clientTools?: ChatTool[];
  /** No one can answer an MCP server's question on this request's door: it is declined. */
  declineElicitations?: boolean;
  /** The mode and base prompt the request's sender read just now: the turn does not read them again. */
  reads?: TurnReads;
}

type TurnAction = (reasoner: AgentReasoner, signal: AbortSignal) => Promise<Outcome<AgentExecuteResponse>>;

const notFound = sessionNotFound;

const usageField = (usage: TokenUsage | undefined) => (usage ? { usage } : {});

export class AgentSession extends DurableObject<Cloudflare.Env> implements AgentSessionManager {
  private readonly store: SessionStore;
  private readonly events: EventLog;
  private readonly tickets: TicketStore;
  private readonly logger: JsonAdminLogger;
  private readonly frames: FrameHub;
  /** The object's reads of D1 (catalog, prompts, MCP servers), as new as its callers' bookmarks. */
  private readonly db: BookmarkedDb;
  /** The session's title in its owner's list, once it has a first message. */
  private title: string | null = null;
  /** The status and mode the list was last told. */
  private listed = "";
  /** A write of the list entry is scheduled. */
  private relistPending = false;
  /** The running turn's cancel switch (a running turn keeps the object in memory). */
  private controller: AbortController | null = null;
  private activeTurnId: string | null = null;
  private clientMessageId: string | null = null;
  /** The running turn, for a request that waits for it after answering a question the turn asked. */
  private running: Promise<Outcome<AgentExecuteResponse>> | null = null;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.store = new SessionStore(ctx.storage);
    this.events = new EventLog(ctx.storage.sql);
    this.tickets = new TicketStore(ctx.storage.sql);
    this.logger = new JsonAdminLogger({ sessionId: ctx.id.toString() });
    this.frames = new FrameHub(ctx, this.events);
    this.db = new BookmarkedDb(env.DB);
    // A turn left `running` by an object that stopped mid-turn is ended before any request is served.
    ctx.blockConcurrencyWhile(async () => {
      if (this.store.record()) this.reasoner().recoverInterruptedTurn();
    });
  }

  /** Writes the new session; called once, by the Worker or by the session it branches from. */
  async initialize(init: SessionInit): Promise<SessionView> {
    await this.create(init);
    return this.view();
  }

  /** The session's record in storage at once; its row in the org's index (D1) when the promise settles. */
  private create(init: SessionInit): Promise<void> {
    if (this.store.record()) throw new Error(`Session ${init.sessionId} already exists.`);
    this.store.create(
      { sessionId: init.sessionId, org: init.org, user: init.user, mode: init.mode },
      init.parentSessionId,
    );
    return indexSession(this.db, init, this.logger);
  }

  /** Another org's caller gets the same answer as for a session that does not exist. */
  async getSession(caller: Caller): Promise<Outcome<SessionView>> {
    return this.owned(caller) ? { ok: true, value: this.view() } : notFound(this.ctx.id.toString());
  }

  async sendMessage(caller: Caller, content: string): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    return this.drive((r, signal) => r.startTurn(content, signal), { caller });
  }

  /**
   * The same turn as sendMessage, answered as a stream of the frames it logs (SSE). Refusals (busy, the
   * key past its model call limit) come before the stream opens, as ordinary error responses.
   */
  async sendMessageStream(caller: Caller, content: string): Promise<Outcome<ReadableStream<Uint8Array>>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    this.expirePause();
    const refusal = this.refusalToStart();
    if (refusal) return refusal;
    const logger = this.callLogger(caller);
    const grant = await takeModelCall(this.env.MODEL_CALL_LIMITER, caller.keyId, logger);
    if (!grant.ok) {
      return refuse("rate_limit_exceeded", grant.message, { retryAfterSeconds: grant.retryAfterSeconds });
    }
    const budget = prepaidBudget(keyModelCallBudget(this.env.MODEL_CALL_LIMITER, caller.keyId, logger));
    const stream = this.frames.openEventStream();
    const done = this.drive((r, signal) => r.startTurn(content, signal), { caller, budget })
      .then((outcome) => (outcome.ok ? undefined : stream.error(outcome.code, outcome.message)))
      .finally(() => stream.close());
    this.ctx.waitUntil(done);
    return { ok: true, value: stream.readable };
  }

  async submitApprovals(caller: Caller, decisions: ApprovalDecision[]): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    return this.drive((r, signal) => r.applyApprovals(decisions, signal), { caller });
  }

  async submitToolResults(caller: Caller, results: ClientToolResult[]): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    return this.drive((r, signal) => r.applyToolResults(results, signal), { caller });
  }

  /**
   * The user's answer to the question a tool's MCP server asks mid-call. The call goes on; the answer returns
   * when the turn next stops (an answer, a pause, or another question).
   */
  async answerElicitation(
    caller: Caller,
    elicitationId: string,
    answer: ElicitationAnswer,
  ): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    const running = this.running;
    const next = this.elicitations().nextQuestion();
    try {
      const refused = this.elicitations().answer(elicitationId, answer);
      if (refused) return refused;
      if (!running) throw new Error("A question was waiting with no turn running.");
      return await this.untilStopOrQuestion(running, next.asked);
    } finally {
      next.dispose();
    }
  }

  /**
   * The agent's OpenAI door: the request's new input (a message, words deciding approvals, or the client's
   * tool results) in this session, with the client's tools; answers the turn and what the agent said.
   */
  async doorTurn(caller: Caller, turn: DoorTurn): Promise<Outcome<DoorAnswer>> {
    const indexed = this.createForDoor(turn);
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    const prepared = this.prepareDoorTurn(caller, turn);
    if ("ok" in prepared) return prepared;
    const before = usageBefore(this.store);
    const [outcome] = await Promise.all([this.drive(prepared.action, prepared.options), indexed]);
    if (!outcome.ok) return outcome;
    const waitingForClient = this.store
      .pendingToolCalls()
      .filter((c) => c.state === "awaiting_client")
      .map((c) => c.id);
    return {
      ok: true,
      value: {
        response: outcome.value,
        content: textSince(this.store, prepared.afterSeq),
        waitingForClient,
        ...usageField(usageSince(before, outcome.value.usage)),
      },
    };
  }

  /** The same, answered as the stream of frames it logs (SSE); refusals come before the stream opens. */
  async doorTurnStream(caller: Caller, turn: DoorTurn): Promise<Outcome<ReadableStream<Uint8Array>>> {
    const indexed = this.createForDoor(turn);
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    this.expirePause();
    if (this.busy()) return this.refusalToStart() ?? refuse("session_busy", "The session is busy.");
    // Results the session cannot take are refused before the stream opens, as a plain request's are.
    if (turn.input.type === "tool_results") {
      const refused = this.reasoner().refusalForToolResults(turn.input.results.map((r) => r.toolCallId));
      if (refused) return refused;
    }
    const prepared = this.prepareDoorTurn(caller, turn);
    if ("ok" in prepared) return prepared;
    const before = usageBefore(this.store);
    const stream = this.frames.openEventStream();
    const done = this.drive(prepared.action, prepared.options)
      .then((outcome) =>
        outcome.ok
          ? stream.direct({ type: "door_usage", usage: usageSince(before, outcome.value.usage) ?? null })
          : stream.error(outcome.code, outcome.message),
      )
      .catch(() => stream.error("internal_error", "The turn failed unexpectedly; send the message again."))
      // The answer ends once the new session is in its org's index too.
      .finally(() => indexed.finally(() => stream.close()));
    this.ctx.waitUntil(done);
    return { ok: true, value: stream.readable };
  }

  /** A door request that starts a session creates it here, in the same call; its index row is written meanwhile. */
  private createForDoor(turn: DoorTurn): Promise<void> {
    if (!turn.create || this.store.record()) return Promise.resolve();
    return this.create({ sessionId: this.ctx.id.toString(), ...turn.create, parentSessionId: null });
  }

  private prepareDoorTurn(
    caller: Caller,
    turn: DoorTurn,
  ): Refusal | { action: TurnAction; options: DriveOptions; afterSeq: number } {
    this.expirePause();
    const action = doorAction(turn, this.store.status(), this.store);
    if (typeof action !== "function") return action;
    seedConversation(this.store, turn.seed);
    const logger = this.callLogger(caller);
    const budget = keyModelCallBudget(this.env.MODEL_CALL_LIMITER, caller.keyId, logger);
    return {
      action,
      options: {
        caller,
        clientTools: turn.clientTools,
        declineElicitations: true,
        reads: turn.reads,
        ...(turn.prepaid ? { budget: prepaidBudget(budget) } : {}),
      },
      afterSeq: lastSeq(this.store),
    };
  }

  /** A paused turn's expiry: its pending calls are settled unexecuted and the session takes messages again. */
  override async alarm(): Promise<void> {
    // A fired alarm is no longer set.
    this.alarmAt = null;
    if (!this.store.record()) return;
    this.expirePause();
    await this.syncPauseAlarm();
  }

  /** Runs a user-invoked workflow inside the session, under the same one-turn-at-a-time rule as a message. */
  async runWorkflow(
    caller: Caller,
    workflowId: string,
    parameters: Record<string, unknown>,
  ): Promise<Outcome<WorkflowRunResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    const reasoner = this.reasoner();
    return runWorkflow(
      {
        store: this.store,
        catalog: new D1AgentModeCatalogService(this.db),
        refusalToStart: () => this.refusalToStart(reasoner),
        setMode: async (identity, mode, reason, turnId) => {
          await this.setSessionMode(identity.sessionId, mode, reason, identity.org, caller.user);
          this.emit({ type: "mode_changed", turnId, from: identity.mode, to: mode, reason });
        },
        createBranch: (mode) => this.createBranch(mode),
      },
      workflowId,
      parameters,
    );
  }

  /** A single-use WebSocket ticket for this session, valid for 60 s. */
  async issueTicket(caller: Caller): Promise<Outcome<{ ticket: string; expiresAt: string }>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    return { ok: true, value: await this.tickets.issue(caller) };
  }

  /** TUL-007's SetSessionMode: checks the mode against the catalog, then writes it and its audit row together. */
  async setSessionMode(sessionId: string, mode: string, reason: string, org: string, user: string): Promise<void> {
    const record = this.store.record();
    if (!record || record.sessionId !== sessionId || record.org !== org) {
      throw new SessionModeError(sessionNotFound(sessionId).message);
    }
    const catalog = new D1AgentModeCatalogService(this.db);
    if (!(await catalog.getMode(mode))) throw new SessionModeError(await unknownModeMessage(catalog, mode));
    this.store.changeMode(mode, reason, user);
  }

  /**
   * The WebSocket door: `GET /ws?ticket=...[&afterSeq=N]`, refused before the upgrade when the ticket fails.
   * A session that does not exist answers exactly as a bad ticket does, so the door tells a caller without
   * a ticket nothing about which sessions exist.
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return upgradeRequiredResponse();
    const record = this.store.record();
    const holder =
      url.pathname === "/ws" && record ? await this.tickets.redeem(url.searchParams.get("ticket") ?? "") : null;
    if (!record || !holder || holder.org !== record.org) return invalidTicketResponse();
    const afterSeq = Number.parseInt(url.searchParams.get("afterSeq") ?? "", 10);
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    const attachment: SocketAttachment = { ...holder, connectedAtSeq: this.events.lastSeq() };
    server.serializeAttachment(attachment);
    if (Number.isInteger(afterSeq) && afterSeq >= 0) this.replay(server, afterSeq, attachment.connectedAtSeq);
    else this.sendDirect(server, this.sessionState());
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const parsed = parseClientFrame(message);
    if (!parsed.ok) return this.sendDirect(ws, { type: "error", code: parsed.code, message: parsed.message });
    const frame = parsed.frame;
    const attachment = ws.deserializeAttachment() as SocketAttachment;
    const caller: Caller = { ...attachment, requestId: `ws-${crypto.randomUUID()}` };
    switch (frame.type) {
      case "ping":
        return this.sendDirect(ws, { type: "pong" });
      case "resume":
        return this.replay(ws, frame.afterSeq, attachment.connectedAtSeq);
      case "cancel":
        return this.answer(ws, this.cancel());
      case "user_message":
        return this.answer(
          ws,
          await this.drive((r, s) => r.startTurn(frame.content, s), { caller, clientMessageId: frame.clientMessageId }),
        );
      case "approval":
        return this.answer(ws, await this.drive((r, s) => r.applyApprovals(frame.decisions, s), { caller }));
      case "tool_results":
        return this.answer(ws, await this.drive((r, s) => r.applyToolResults(frame.results, s), { caller }));
      case "elicitation_response": {
        const { elicitationId, action, content } = frame;
        const answer = { action, ...(content ? { content } : {}) };
        return this.answer(ws, this.elicitations().answer(elicitationId, answer) ?? { ok: true, value: null });
      }
    }
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
    } catch {
      // The socket is already closed on the other side.
    }
  }

  private answer(ws: WebSocket, outcome: Outcome<unknown>): void {
    if (!outcome.ok) this.sendDirect(ws, { type: "error", code: outcome.code, message: outcome.message });
  }

  /** A turn runs: `running` in storage, or still starting (it asks the key's budget before it writes `running`). */
  private busy(): boolean {
    return this.store.status() === "running" || this.running !== null;
  }

  /**
   * Why a new message (or workflow) cannot start now: a turn is starting, a question of an MCP server waits
   * for its answer, a turn runs, or a paused turn waits for approvals or results; null when it can.
   */
  private refusalToStart(reasoner: AgentReasoner = this.reasoner()): Refusal | null {
    if (this.running !== null && this.store.status() === "idle") return refuse("session_busy", "The session is busy.");
    const question = this.elicitations().pending();
    if (question) {
      return refuse(
        "session_awaiting_input",
        `The session is waiting for the answer to a question from MCP server ${quoted(question.server)} (elicitation ${question.elicitationId}); answer it or cancel the turn first.`,
      );
    }
    return reasoner.refusalToStart();
  }

  /**
   * Runs one reasoner action with a cancel switch; a running turn refuses before anything else changes.
   * A paused turn whose pause expired is ended first, and the expiry alarm follows the turn afterwards.
   */
  private async drive(action: TurnAction, options: DriveOptions = {}): Promise<Outcome<AgentExecuteResponse>> {
    if (this.busy()) {
      return this.refusalToStart() ?? refuse("session_busy", "The session is busy.");
    }
    this.expirePause();
    const reasoner = this.reasoner(options);
    const controller = new AbortController();
    this.controller = controller;
    this.clientMessageId = options.clientMessageId ?? null;
    this.activeTurnId = this.store.turn()?.turnId ?? null;
    const next = this.elicitations().nextQuestion();
    this.mcp?.keepOpen();
    const running = (async () => {
      try {
        return await action(reasoner, controller.signal);
      } catch (error) {
        // Whoever waits for the turn (maybe no one, once it answered `awaiting_input`) gets the failure;
        // the turn itself is ended, so the session does not stay `running`.
        this.callLogger(options.caller).addException("[AgentSession_Turn__Exception]", error);
        reasoner.failBrokenTurn();
        throw error;
      } finally {
        if (this.controller === controller) this.controller = null;
        this.mcp?.closeWhenIdle();
        await this.syncPauseAlarm();
      }
    })();
    this.running = running;
    // Handled either way: a failure nobody awaits any more is logged above, not left unhandled.
    const ended = () => {
      if (this.running === running) this.running = null;
    };
    running.then(ended, ended);
    try {
      return await this.untilStopOrQuestion(running, next.asked);
    } finally {
      next.dispose();
    }
  }

  /**
   * What a request to a running turn answers: the turn's end or pause, or, when a tool's MCP server asks the
   * user a question first, `awaiting_input` with the question (the turn goes on and waits for the answer).
   */
  private async untilStopOrQuestion(
    running: Promise<Outcome<AgentExecuteResponse>>,
    asked: Promise<PendingElicitation>,
  ): Promise<Outcome<AgentExecuteResponse>> {
    const first = await Promise.race([running, asked.then((question) => ({ question }))]);
    if (!("question" in first)) return first;
    const turn = this.store.turn();
    if (!turn) throw new Error("A question was asked with no turn open.");
    return {
      ok: true,
      value: { ...turnResponse(this.store, turn, "awaiting_input", turn.text ?? ""), elicitation: first.question },
    };
  }

  private desk?: ElicitationDesk;
  private mcp?: McpToolSource;

  /** Questions a tool's MCP server asks mid-call; they wait at most the pause TTL. */
  private elicitations(): ElicitationDesk {
    this.desk ??= new ElicitationDesk((frame) => this.emit(frame), settings(this.env).agent.pauseTtlMs);
    return this.desk;
  }

  /** Ends the paused turn if its pause has expired (lazily, on the next request, or from the alarm). */
  private expirePause(): void {
    this.activeTurnId = this.store.turn()?.turnId ?? null;
    this.reasoner().expirePausedTurn();
  }

  /** The alarm as this object last read or set it (undefined: not read yet since the object started). */
  private alarmAt: number | null | undefined;

  /** One alarm, at the paused turn's expiry; none while no turn waits. Storage is touched only on a change. */
  private async syncPauseAlarm(): Promise<void> {
    const expiresAt = this.reasoner().pauseExpiresAt();
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === expiresAt) return;
    if (expiresAt === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(expiresAt);
    this.alarmAt = expiresAt;
  }

  private callLogger(caller?: Caller): JsonAdminLogger {
    return caller?.requestId ? this.logger.with({ requestId: caller.requestId, keyId: caller.keyId }) : this.logger;
  }

  private cancel(): Outcome<unknown> {
    if (this.controller && this.store.status() === "running") {
      this.controller.abort(new DOMException("The turn was cancelled.", "AbortError"));
      return { ok: true, value: null };
    }
    return this.reasoner().cancelPausedTurn();
  }

  private emit(frame: LoggedFrame): void {
    this.frames.emit(frame);
    const record = this.store.record();
    const listed = record ? `${record.status} ${record.mode}` : "";
    if (LISTED_CHANGES.has(frame.type) || listed !== this.listed) this.relist();
    this.listed = listed;
  }

  /**
   * The session's entry in its owner's list (D1) is rewritten after a change, off the reply path: one write for
   * the changes of LIST_WRITE_DELAY_MS (a quick turn's start and end are one write), so the write of a turn's start
   * does not stand in the way of its first model call.
   */
  private relist(): void {
    if (this.relistPending) return;
    this.relistPending = true;
    const write = new Promise((resolve) => setTimeout(resolve, LIST_WRITE_DELAY_MS)).then(() => {
      this.relistPending = false;
      return this.writeListEntry();
    });
    this.ctx.waitUntil(write);
  }

  /** The session's entry as it is now; a write that lands after a newer one changes nothing (its seq is lower). */
  private writeListEntry(): Promise<void> {
    const record = this.store.record();
    if (!record) return Promise.resolve();
    const waitingForUser = record.status !== "idle" && record.status !== "running";
    this.title ??= firstMessageTitle(this.store);
    const entry = {
      sessionId: record.sessionId,
      mode: record.mode,
      status: record.status,
      waitingForUser: waitingForUser || this.elicitations().pending() !== undefined,
      title: this.title,
      updatedAt: new Date().toISOString(),
      seq: this.events.lastSeq(),
    };
    return updateSessionIndex(this.db, entry, this.logger);
  }

  private sendDirect(ws: WebSocket, frame: DirectFrame): void {
    this.frames.sendDirect(ws, frame);
  }

  private replay(ws: WebSocket, afterSeq: number, connectedAtSeq: number): void {
    this.frames.replay(ws, afterSeq, connectedAtSeq, this.sessionState());
  }

  private sessionState(): SessionStateFrame {
    const state = sessionStateFrame(this.store, this.ctx.id.toString(), this.events.lastSeq());
    const question = this.elicitations().pending();
    const turnId = state.status === "running" ? this.activeTurnId : null;
    return {
      ...state,
      ...(question ? { pendingElicitation: question } : {}),
      ...(turnId ? { streamedText: this.events.streamedText(turnId) } : {}),
    };
  }

  private turnEvents(): TurnEvents {
    const turnId = () => this.activeTurnId ?? this.store.turn()?.turnId ?? "";
    return {
      turnStarted: (id) => {
        this.activeTurnId = id;
        this.emit({ type: "turn_started", turnId: id, clientMessageId: this.clientMessageId });
      },
      assistantDelta: (text) => this.emit({ type: "assistant_delta", turnId: turnId(), text }),
      assistantRestarted: (restart) => this.emit({ type: "assistant_restarted", turnId: turnId(), ...restart }),
      toolCallStarted: (toolCall) => this.emit({ type: "tool_call_started", turnId: turnId(), toolCall }),
      toolCallCompleted: (toolCall) => this.emit({ type: "tool_call_completed", turnId: turnId(), toolCall }),
      approvalRequired: (toolCalls) => this.emit({ type: "approval_required", turnId: turnId(), toolCalls }),
      clientToolRequired: (toolCalls) => this.emit({ type: "client_tool_required", turnId: turnId(), toolCalls }),
      modeChanged: (change) => this.emit({ type: "mode_changed", turnId: turnId(), ...change }),
      turnCompleted: (response) => this.emit({ type: "turn_completed", turnId: turnId(), response }),
    };
  }

  private owned(caller: Caller): boolean {
    const owned = this.store.record()?.org === caller.org;
    // Only the owner's bookmark moves the object's reads on.
    if (owned) this.db.advance(caller.bookmark);
    return owned;
  }

  private view(): SessionView {
    const view = sessionView(this.store);
    const question = this.elicitations().pending();
    return question ? { ...view, pendingElicitation: question } : view;
  }

  /** What every reasoner of this object shares, built once: settings, catalog, tool registry, model, events. */
  private shared?: Pick<
    AgentReasonerDeps,
    | "store"
    | "registry"
    | "catalog"
    | "basePrompt"
    | "config"
    | "createBranchSession"
    | "events"
    | "remoteTools"
    | "elicit"
  >;

  private sharedDeps() {
    if (!this.shared) {
      const config = settings(this.env);
      const catalog = new D1AgentModeCatalogService(this.db);
      // What the MCP servers list, kept for the object's life (with a TTL); connections close when idle.
      const mcp = new McpToolSource(this.db, this.env, this.logger, config.mcp.discoveryTtlMs);
      this.mcp = mcp;
      this.shared = {
        store: this.store,
        registry: createAgentToolRegistry({
          logger: this.logger,
          sessionManager: this,
          catalog,
          workspace: config.workspace,
        }),
        catalog,
        basePrompt: () => sessionBasePrompt(this.db),
        config: config.agent,
        createBranchSession: (mode) => this.createBranch(mode),
        events: this.turnEvents(),
        remoteTools: (names, base) => mcp.forTools(names, base),
        elicit: (request, signal) =>
          this.elicitations().ask(this.activeTurnId ?? this.store.turn()?.turnId ?? "", request, signal),
      };
    }
    return this.shared;
  }

  /**
   * A reasoner acting for `caller`: its model calls count against the caller's key, its logs carry the request
   * id. Everything else is the object's, built once (sharedDeps).
   */
  private reasoner(options: DriveOptions = {}): AgentReasoner {
    const logger = this.callLogger(options.caller);
    const budget =
      options.budget ??
      (options.caller ? keyModelCallBudget(this.env.MODEL_CALL_LIMITER, options.caller.keyId, logger) : undefined);
    const shared = this.sharedDeps();
    const { reads } = options;
    const { caller } = options;
    const defer = (work: Promise<unknown>) => this.ctx.waitUntil(work);
    const session = () => {
      const { sessionId, mode } = this.store.identity();
      return { sessionId, mode };
    };
    return new AgentReasoner({
      ...shared,
      router: envRouter(
        this.env,
        logger,
        caller ? turnUsageRecorder(this.env, caller, session, logger, defer, this) : undefined,
      ),
      ...(caller && settings(this.env).metering.budgets
        ? { meter: orgTurnMeter(this.env, caller, logger, defer, this) }
        : {}),
      ...(reads
        ? { catalog: catalogKnowing(shared.catalog, reads.mode), basePrompt: () => Promise.resolve(reads.basePrompt) }
        : {}),
      logger,
      ...(budget ? { budget } : {}),
      ...(options.clientTools
        ? { clientTools: { tools: options.clientTools.map(clientFunctionTool), hideModeClientTools: true } }
        : {}),
      ...(options.declineElicitations ? { elicit: undefined } : {}),
    });
  }

  private async createBranch(mode: string): Promise<string> {
    const parent = this.store.identity();
    const id = this.env.AGENT_SESSION.newUniqueId();
    await this.env.AGENT_SESSION.get(id).initialize({
      sessionId: id.toString(),
      org: parent.org,
      user: parent.user,
      mode,
      parentSessionId: parent.sessionId,
    });
    return id.toString();
  }
}

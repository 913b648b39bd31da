// AgentSession: one Durable Object per agent session, and its RPC front. It owns the session's storage (a
// versioned SQLite schema), checks every caller's org, and hands each job to the part that does it: the loop's
// turns (turn-driver.ts, which admits them by turn-admission.ts; reasoner-factory.ts), the WebSocket
// (session-sockets.ts), the agent's OpenAI doors (chat-turns.ts), the session's alarm (session-alarm.ts), the owner's
// session list (list-writer.ts), workflows (workflow-runner.ts), and renaming, archiving, exporting and deleting
// the session (session-keeper.ts). A door is one way in that a client speaks to the agent: REST, SSE, the
// WebSocket, the chat completions, Responses and Messages endpoints, /mcp, A2A.
import { DurableObject } from "cloudflare:workers";
import { TokenCalibration } from "../agent/token-calibration";
import { maskedForModel } from "../agent/turn-guardrails";
import { keyStanding } from "../auth/api-keys";
import { BookmarkedDb } from "../db";
import { D1AgentModeCatalogService, unknownModeMessage } from "../modes/catalog-service";
import { JsonAdminLogger } from "../observability/admin-logger";
import { countedEnv } from "../observability/op-counts";
import { quoted } from "../quote";
import { type Outcome, refuse, sessionNotFound, turnNotFound } from "../refusal";
import { settings } from "../settings";
import { mayActOnSession } from "../tenancy/ownership";
import { type AgentSessionManager, SessionModeError } from "../tools/session-manager";
import { sendEventMessage } from "../webhooks/events";
import type { MessageAttachment } from "../wire/attachments";
import type { ElicitationAnswer } from "../wire/elicitation";
import type { LoggedFrame } from "../wire/frames";
import type {
  ApprovalDecision,
  ClientToolResult,
  MessagePage,
  SessionListEntry,
  SessionSummary,
  SessionView,
  WorkflowRunResponse,
} from "../wire/session";
import type { TurnTimeline } from "../wire/timeline";
import type { AgentExecuteResponse, TurnAccepted, TurnPage, TurnStatus, TurnStatusValue } from "../wire/turn";
import { type BackgroundAsk, startBackgroundTurn } from "./background-turns";
import type { Caller } from "./caller";
import { type ChatTurn, type ChatTurnAnswer, ChatTurns, HEAD_MOVED, type HeadMoved } from "./chat-turns";
import { Compactor } from "./compaction";
import { ElicitationDesk } from "./elicitations";
import { EventLog } from "./event-log";
import { EventOutbox } from "./event-outbox";
import { FrameHub } from "./frame-hub";
import { firstMessageTitle, SessionListWriter } from "./list-writer";
import { MemoryCopy } from "./memory-copy";
import { MessageFeed } from "./message-feed";
import { type MessageStreamOptions, streamMessage } from "./message-stream";
import { type ModePin, ModePins, pinnedModeMessage } from "./mode-pin";
import { ReasonerFactory } from "./reasoner-factory";
import { SessionAlarm } from "./session-alarm";
import { type BranchSeed, branchOrigin, branchSeed, seedBranch } from "./session-branch";
import type { ExportFile, ExportFormat } from "./session-export";
import { type EntryChange, indexSession } from "./session-index";
import { type Expiry, SessionKeeper } from "./session-keeper";
import { migrateSessionStorage } from "./session-schema";
import { SessionSockets } from "./session-sockets";
import { SessionStore } from "./session-store";
import { SessionVault } from "./session-vault";
import { sessionView } from "./session-view";
import { headStatement, SessionHead } from "./thread-head";
import { invalidTicketResponse, TicketStore } from "./tickets";
import { TurnDriver } from "./turn-driver";
import { turnFrames } from "./turn-frames";
import { TurnHistory } from "./turn-history";
import { TurnSteps } from "./turn-steps";
import { TurnStops } from "./turn-stops";
import { timelineTurn, turnTimeline } from "./turn-timeline";
import { UsageOutbox } from "./usage-outbox";
import { runWorkflow } from "./workflow-runner";

export interface SessionInit {
  sessionId: string;
  org: string;
  user: string;
  mode: string;
  parentSessionId: string | null;
  /** A branch a person starts: where it came from, and the conversation it starts with. */
  branch?: Pick<BranchSeed, "origin" | "messages">;
  /** The list's title from the start (a schedule's name), instead of one from the first message. */
  title?: string;
  /** Pinned to a version of its mode (evals): its turns run with that version's snapshot. */
  pin?: ModePin;
  /**
   * Made ahead of its first turn (a schedule's run, a minute or two before it is due): not in the org's list until
   * whoever made it lists it when the turn starts, so a person never sees an empty session.
   */
  unlisted?: boolean;
}

export class AgentSession extends DurableObject<Cloudflare.Env> implements AgentSessionManager {
  /** The session's storage; the object is its only writer (tests run inside the object read it here too). */
  readonly store: SessionStore;
  /** The turn timeline's steps (the loop records each step here as it ends; the timeline route reads them). */
  readonly steps: TurnSteps;
  private readonly events: EventLog;
  private readonly frames: FrameHub;
  private readonly tickets: TicketStore;
  private readonly logger: JsonAdminLogger;
  /** The object's reads of D1 (catalog, prompts, MCP servers), as new as its callers' bookmarks. */
  private readonly db: BookmarkedDb;
  /** The session's entry in its owner's list (tests wait on its settled()). */
  readonly list: SessionListWriter;
  private readonly alarmClock: SessionAlarm;
  private readonly reasoners: ReasonerFactory;
  private readonly driver: TurnDriver;
  private readonly sockets: SessionSockets;
  private readonly chatTurns: ChatTurns;
  /** The conversation's head on the OpenAI door, as this session keeps it. */
  private readonly head: SessionHead;
  private readonly keeper: SessionKeeper;
  /** Summarises the conversation's older turns after a turn, when they no longer fit (tests wait on its idle()). */
  readonly compaction: Compactor;
  /**
   * The token estimate calibrated per route from the usage the session's model calls report, kept in the object's
   * storage so it outlives an eviction (token-calibration.ts).
   */
  readonly calibration: TokenCalibration;
  private questions?: ElicitationDesk;
  /** Publishes every turn's stop (turn.completed, turn.failed, turn.paused) through the event outbox. */
  readonly turnStops: TurnStops;
  /** The turn events kept until the queue has them; tests may record, or fail, its `send`. */
  readonly outbox: EventOutbox;
  /** The usage rows of the session's model calls, kept until its list entry's D1 batch carries them. */
  readonly usage: UsageOutbox;
  private readonly history: TurnHistory;
  /** The owner's memories as the session's last list write read them (src/session/memory-copy.ts). */
  readonly memoryCopy = new MemoryCopy();
  /** The mode version the session is pinned to, if any (src/session/mode-pin.ts). */
  private readonly pins: ModePins;
  /** What the mask guardrails hid from the model in this session, by placeholder (src/session/session-vault.ts). */
  private readonly vault: SessionVault;

  constructor(ctx: DurableObjectState, workerEnv: Cloudflare.Env) {
    // npm run bench:ops's counting bindings when it asks for them (src/observability/op-counts.ts), else the env itself.
    const env = countedEnv(workerEnv);
    super(ctx, env);
    // The schema first: every part below reads and writes its tables.
    migrateSessionStorage(ctx.storage);
    this.store = new SessionStore(ctx.storage);
    this.pins = new ModePins(ctx.storage.sql);
    this.calibration = new TokenCalibration(this.store);
    this.steps = new TurnSteps(ctx.storage.sql);
    this.vault = new SessionVault(ctx.storage.sql);
    this.events = new EventLog(ctx.storage.sql);
    this.frames = new FrameHub(ctx, this.events);
    this.tickets = new TicketStore(ctx.storage.sql);
    this.logger = new JsonAdminLogger({ sessionId: ctx.id.toString() });
    this.db = new BookmarkedDb(env.DB);
    const waitUntil = (work: Promise<unknown>) => ctx.waitUntil(work);
    const desk = () => this.desk();
    // Its rows wait for the list write below; the alarm (rearmed by the driver, made further down) stands by.
    const usage = new UsageOutbox({
      sql: ctx.storage.sql,
      logger: this.logger,
      rearm: () =>
        ctx.waitUntil(
          this.driver
            .syncAlarm()
            .catch((error: unknown) => this.logger.addException("[AgentSession_Alarm__Exception]", error)),
        ),
    });
    this.usage = usage;
    // The driver (made further down) knows which turn the loop's events belong to, and keeps the alarm.
    let driver: TurnDriver | undefined;
    const logger = this.logger;
    // Turn events wait in it for the list write below, which checks whether anyone hears them.
    this.outbox = new EventOutbox(
      {
        sql: ctx.storage.sql,
        logger,
        rearm: () =>
          ctx.waitUntil(
            (driver?.syncAlarm() ?? Promise.resolve()).catch((error: unknown) =>
              logger.addException("[AgentSession_Alarm__Exception]", error),
            ),
          ),
        gone: () => this.store.record() === null,
      },
      (message) => sendEventMessage(env, message),
    );
    const outbox = this.outbox;
    this.list = new SessionListWriter({
      store: this.store,
      events: this.events,
      db: this.db,
      logger: this.logger,
      feed: new MessageFeed({ store: this.store, sql: ctx.storage.sql }),
      usage,
      outbox,
      questionWaiting: () => this.desk().pending() !== undefined,
      memoryRead: (at) => this.reasoners.memoryRead(at),
      waitUntil,
    });
    this.alarmClock = new SessionAlarm(
      ctx.storage,
      () => outbox.dueAt(),
      () => usage.dueAt(),
    );
    this.turnStops = new TurnStops({
      store: this.store,
      env,
      turnId: () => driver?.turnId() ?? "",
      logger: this.logger,
      outbox,
      kept: () => this.list.eventKept(),
    });
    this.history = new TurnHistory(this.store, ctx.storage.sql);
    const frameEvents = turnFrames((frame) => this.emit(frame), {
      turnId: () => driver?.turnId() ?? "",
      started: (turnId) => driver?.started(turnId),
      clientMessageId: () => driver?.clientMessageId() ?? null,
      // Stop keeps what was streamed: the answer so far (its frames since the turn's last tool call) is stored,
      // marked as stopped, so a reload, an export and the next turn's history have it as the person saw it.
      cancelled: (turnId) => {
        // The deltas still waiting to be logged were streamed too (SSE has them): logged first, so the text is whole.
        this.frames.flush();
        const text = this.events.streamedText(turnId);
        if (text) this.store.appendMessage({ turnId, role: "assistant", content: text, kind: "stopped" });
      },
    });
    // The loop's events become frames, and each stop's event is kept for its check.
    const turnEvents = this.turnStops.wrap(frameEvents);
    this.reasoners = new ReasonerFactory({
      env,
      db: this.db,
      store: this.store,
      logger: this.logger,
      events: turnEvents,
      sessionManager: this,
      elicit: (request, signal) => this.desk().ask(driver?.turnId() ?? "", request, signal),
      createBranch: (mode) => this.createBranch(mode),
      waitUntil,
      keepUsage: (record) => this.list.keepUsage(record),
      steps: this.steps,
      calibration: this.calibration,
      memoryCopy: this.memoryCopy,
      pin: () => this.pins.pin(),
      vault: this.vault,
    });
    const reasoners = this.reasoners;
    this.compaction = new Compactor({
      store: this.store,
      config: () => settings(env).agent,
      catalog: () => reasoners.catalog(),
      access: (caller) => reasoners.modelAccess(caller, "agent_compaction"),
      calibration: this.calibration,
      waitUntil,
      forModel: (messages) => maskedForModel(this.vault.vault(), messages),
    });
    const compaction = this.compaction;
    driver = new TurnDriver({
      store: this.store,
      reasoners,
      desk,
      alarm: this.alarmClock,
      logger: this.logger,
      resume: settings(env).resume,
      afterTurn: (caller) => compaction.afterTurn(caller),
    });
    this.driver = driver;
    const { store, events, frames, tickets } = this;
    this.sockets = new SessionSockets({
      ctx,
      store,
      events,
      frames,
      tickets,
      driver,
      desk,
      logger: this.logger,
      standing: async (holder) => {
        const { problem, admin } = await keyStanding(this.db, holder.org, holder.user, holder.keyId);
        const caller: Caller = { ...holder, admin, requestId: `ws-${crypto.randomUUID()}` };
        return problem === null && this.owned(caller) ? caller : null;
      },
    });
    this.head = new SessionHead(ctx.storage.sql, this.db, ctx.id.toString());
    this.chatTurns = new ChatTurns({
      env,
      store,
      frames,
      driver,
      logger: this.logger,
      create: (init) => this.create({ sessionId: ctx.id.toString(), ...init, parentSessionId: null }),
      recordHead: (thread, head) => {
        this.head.keep(thread.keyId, head);
        return this.list.writeHead(headStatement(this.db, ctx.id.toString(), thread.keyId, head));
      },
      // A deleted session is asked as an evicted one would be (D1's head): its owner's history is then answered 404, as
      // every request to it is, and another's a new session, as for a live session.
      headIs: (keyId, head) => this.head.is(keyId, head, this.keeper.deleted()),
      waitUntil,
    });
    this.keeper = new SessionKeeper({
      ctx,
      store,
      db: this.db,
      driver: this.driver,
      frames,
      logger: this.logger,
      usage,
    });
    // A turn left `running` by an object that stopped mid-turn resumes at once, from the alarm (alarm()); events an
    // earlier instance kept but did not send are sent from it too.
    // Usage rows an earlier instance kept but did not write are written from it too.
    if ((this.store.record() && this.driver.interrupted()) || this.alarmClock.wanted() !== null) {
      ctx.waitUntil(this.alarmClock.sync(Date.now()));
    }
  }

  /** Writes the new session; called once, by the Worker or by the session it branches from. */
  async initialize(init: SessionInit): Promise<SessionView> {
    await this.create(init);
    return this.view();
  }

  /** The session's record in storage at once; its row in the org's index (D1) when the promise settles. */
  private create(init: SessionInit): Promise<void> {
    if (this.store.record()) throw new Error(`Session ${init.sessionId} already exists.`);
    if (this.keeper.deleted()) throw new Error(`Session ${init.sessionId} was deleted.`);
    this.store.create(
      { sessionId: init.sessionId, org: init.org, user: init.user, mode: init.mode },
      init.parentSessionId,
    );
    if (init.pin) this.pins.write(init.pin);
    if (init.unlisted) return Promise.resolve();
    if (!init.branch) return this.index(init);
    seedBranch(this.ctx.storage, this.store, init.branch);
    const branch = { branchOf: init.branch.origin, title: firstMessageTitle(this.store) };
    return this.index({ ...init, ...branch });
  }

  /**
   * The new session's row in the org's index, with the read of its owner's memories for the session's copy in the
   * same D1 batch (when memory is on for its org and mode): its first turn then recalls from the copy and reads no
   * D1 (issue 46), and the read costs no round trip of its own.
   */
  private async index(session: Parameters<typeof indexSession>[1]): Promise<void> {
    const at = new Date().toISOString();
    const read = await this.reasoners.memoryRead(at).catch((error: unknown) => {
      this.logger.addException("[memory_copy]", error, [["SessionId", session.sessionId]]);
      return null;
    });
    const written = await indexSession(
      this.db,
      session,
      this.logger,
      read ? { at, statements: read.statements } : undefined,
    );
    if (read && written) read.keep(written.alongside, written.inserted);
  }

  /** Anyone but its owner and an admin of its org gets the same answer as for a session that does not exist. */
  async getSession(caller: Caller): Promise<Outcome<SessionView>> {
    return this.owned(caller) ? { ok: true, value: this.view() } : this.notFound();
  }

  /** The whole summary of the earlier conversation (the view carries a preview), for its owner or an org admin. */
  async getSummary(caller: Caller): Promise<Outcome<SessionSummary>> {
    if (!this.owned(caller)) return this.notFound();
    return { ok: true, value: { sessionId: this.store.identity().sessionId, summary: this.store.summary() } };
  }

  /**
   * What a branch before the user's message `beforeMessage` starts from (its owner's, or an admin's of its org): the
   * conversation before it, and the mode now. Nothing here changes.
   */
  async branchSeed(caller: Caller, beforeMessage: number): Promise<Outcome<BranchSeed>> {
    if (!this.owned(caller)) return this.notFound();
    return branchSeed(this.store, beforeMessage);
  }

  /** A page of the conversation, newest first: up to `limit` messages before `before` (the newest when null). */
  async getMessages(caller: Caller, page: { before: number | null; limit: number }): Promise<Outcome<MessagePage>> {
    if (!this.owned(caller)) return this.notFound();
    return { ok: true, value: this.store.messagesPage(page.before, page.limit) };
  }

  /** One turn's steps on a time axis (the waterfall's figures): the open turn's so far, or an ended turn's. */
  async turnTimeline(caller: Caller, turnId: string): Promise<Outcome<TurnTimeline>> {
    if (!this.owned(caller)) return this.notFound();
    const turn = timelineTurn(this.store, turnId);
    if (!turn) return turnNotFound(turnId);
    const ids = { sessionId: this.store.identity().sessionId, turnId };
    return { ok: true, value: turnTimeline(ids, turn, this.steps.forTurn(turnId), Date.now()) };
  }

  async sendMessage(
    caller: Caller,
    content: string,
    attachments: readonly MessageAttachment[] = [],
  ): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return this.notFound();
    return this.driver.turn({ kind: "message", content, attachments }, { caller });
  }

  /**
   * The same turn as sendMessage, answered as a stream of the frames it logs (SSE). Refusals (the admission's: busy,
   * an image the mode cannot read, the key past its model call limit) come before the stream opens, as ordinary
   * error responses.
   */
  async sendMessageStream(
    caller: Caller,
    content: string,
    attachments: readonly MessageAttachment[] = [],
    options: MessageStreamOptions = {},
  ): Promise<Outcome<ReadableStream<Uint8Array>>> {
    if (!this.owned(caller)) return this.notFound();
    const { driver, frames } = this;
    return streamMessage(
      { driver, frames, waitUntil: (work) => this.ctx.waitUntil(work) },
      caller,
      content,
      attachments,
      options,
    );
  }

  async submitApprovals(caller: Caller, decisions: ApprovalDecision[]): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return this.notFound();
    return this.driver.turn({ kind: "approvals", decisions }, { caller });
  }

  async submitToolResults(caller: Caller, results: ClientToolResult[]): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return this.notFound();
    return this.driver.turn({ kind: "tool_results", results }, { caller });
  }

  /** The user's answer to the question a tool's MCP server asks mid-call; answered when the turn next stops. */
  async answerElicitation(
    caller: Caller,
    elicitationId: string,
    answer: ElicitationAnswer,
  ): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return this.notFound();
    return this.driver.answerElicitation(elicitationId, answer);
  }

  /**
   * Starts a turn that runs on after this call answers (`Prefer: respond-async`, schedules, A2A): admitted as every
   * door's turn (refusals store nothing), answered once its first state is stored (background-turns.ts).
   */
  async startTurn(caller: Caller, ask: BackgroundAsk): Promise<Outcome<TurnAccepted>> {
    if (!this.owned(caller)) return this.notFound();
    const { store, driver, logger } = this;
    return startBackgroundTurn({ store, driver, logger, waitUntil: (work) => this.ctx.waitUntil(work) }, caller, ask);
  }

  /** One turn's status: running, paused (with what it awaits), or how it ended (its answer, or its error). */
  async turnStatus(caller: Caller, turnId: string): Promise<Outcome<TurnStatus>> {
    if (!this.owned(caller)) return this.notFound();
    const status = this.history.status(turnId);
    return status ? { ok: true, value: status } : turnNotFound(turnId);
  }

  /**
   * Cancels the turn `turnId` when it is the session's open one (running or paused), and answers its status once it
   * has stopped (the A2A door's CancelTask); an ended turn's status is answered as it is.
   */
  async cancelTurn(caller: Caller, turnId: string): Promise<Outcome<TurnStatus>> {
    if (!this.owned(caller)) return this.notFound();
    const before = this.history.status(turnId);
    if (!before) return turnNotFound(turnId);
    if (before.status === "running" || before.status === "paused") {
      const cancelled = await this.driver.cancelSettled(caller);
      if (!cancelled.ok) return cancelled;
    }
    const after = this.history.status(turnId);
    return after ? { ok: true, value: after } : turnNotFound(turnId);
  }

  /** The frames of the running turn `turnId` from now until it stops (the A2A door's SubscribeToTask), as SSE. */
  async followTurn(caller: Caller, turnId: string): Promise<Outcome<ReadableStream<Uint8Array>>> {
    if (!this.owned(caller)) return this.notFound();
    if (this.history.status(turnId)?.status !== "running") {
      return refuse("nothing_pending", `Turn ${quoted(turnId)} is not running: there is nothing to follow.`);
    }
    return { ok: true, value: this.frames.openEventStream(turnId).readable };
  }

  /** A page of the session's turns, newest first (turn-history.ts). */
  async listTurns(
    caller: Caller,
    options: { status?: TurnStatusValue; before?: string | null; limit?: number } = {},
  ): Promise<Outcome<TurnPage>> {
    if (!this.owned(caller)) return this.notFound();
    return { ok: true, value: this.history.page({ ...options, limit: options.limit ?? 20 }) };
  }

  /**
   * The agent's OpenAI door: the request's new input (a message, words deciding approvals, or the client's tool
   * results) in this session, with the client's tools; answers the turn and what the agent said.
   */
  async chatTurn(caller: Caller, turn: ChatTurn): Promise<Outcome<ChatTurnAnswer> | HeadMoved> {
    if (await this.chatTurns.moved(turn)) return HEAD_MOVED;
    const made = this.makesSession(turn);
    // A deleted session is never made again here: the caller is answered 404 below.
    const indexed = this.keeper.deleted() ? Promise.resolve() : this.chatTurns.createIfNew(turn);
    if (!this.owned(caller)) return this.notFound();
    return this.unlessRefused(caller, made, indexed, await this.chatTurns.turn(caller, turn, indexed));
  }

  /** The same, answered as the stream of frames it logs (SSE); refusals come before the stream opens. */
  async chatTurnStream(caller: Caller, turn: ChatTurn): Promise<Outcome<ReadableStream<Uint8Array>> | HeadMoved> {
    if (await this.chatTurns.moved(turn)) return HEAD_MOVED;
    const made = this.makesSession(turn);
    const indexed = this.keeper.deleted() ? Promise.resolve() : this.chatTurns.createIfNew(turn);
    if (!this.owned(caller)) return this.notFound();
    return this.unlessRefused(caller, made, indexed, await this.chatTurns.stream(caller, turn, indexed));
  }

  /** The door's request makes this session now (a new conversation). */
  private makesSession(turn: ChatTurn): boolean {
    return turn.create !== undefined && !this.keeper.deleted() && this.store.record() === null;
  }

  /**
   * A session this request made is taken back when its turn is refused (the budget, a guardrail, the model's refusal
   * of the request): the refusal names no session to the client, so it would stay in their list unseen, one more at
   * each try. What the person wrote is in their own request, which they still have.
   */
  private async unlessRefused<T>(
    caller: Caller,
    made: boolean,
    indexed: Promise<void>,
    outcome: Outcome<T>,
  ): Promise<Outcome<T>> {
    if (!made || outcome.ok) return outcome;
    // The refusal is the answer whatever happens here: a session not taken back is logged, not answered.
    try {
      await indexed;
      const dropped = await this.keeper.delete(caller);
      if (!dropped.ok) throw new Error(dropped.message);
    } catch (error) {
      this.logger.addException("[AgentSession_RefusedNew]", error);
    }
    return outcome;
  }

  /** Runs a user-invoked workflow inside the session, under the same one-turn-at-a-time rule as a message. */
  async runWorkflow(
    caller: Caller,
    workflowId: string,
    parameters: Record<string, unknown>,
  ): Promise<Outcome<WorkflowRunResponse>> {
    if (!this.owned(caller)) return this.notFound();
    return runWorkflow(
      {
        store: this.store,
        catalog: new D1AgentModeCatalogService(this.db, this.store.identity().org),
        admit: () => this.driver.admit({ kind: "workflow" }, { caller }),
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
    if (!this.owned(caller)) return this.notFound();
    return { ok: true, value: await this.tickets.issue(caller) };
  }

  /** Deletes the session for good (its owner, or an admin of its org); from then on it answers 404 everywhere. */
  async deleteSession(caller: Caller): Promise<Outcome<{ sessionId: string; deleted: true }>> {
    if (this.owned(caller)) return this.keeper.delete(caller);
    return this.notFound();
  }

  /** Renames or archives the session (its owner, or an admin of its org); answers its list entry. */
  async changeSession(caller: Caller, change: EntryChange): Promise<Outcome<SessionListEntry>> {
    if (this.owned(caller)) return this.keeper.change(caller, change);
    return this.notFound();
  }

  /** The whole session, as JSON (`aptix.session.v1`) or Markdown, in one call. */
  async exportSession(caller: Caller, format: ExportFormat): Promise<Outcome<ExportFile>> {
    if (!this.owned(caller)) return this.notFound();
    return { ok: true, value: await this.keeper.export(format) };
  }

  /**
   * A memory of the owner's, or of their org's, changed somewhere (src/session/memory-notify.ts): the copy goes, so
   * the next prompt reads them anew. Touches no storage.
   */
  async memoriesChanged(): Promise<void> {
    this.memoryCopy.drop();
  }

  /** Retention (the Worker's cron): deletes the session if it has been idle since before `cutoff`. */
  async expire(cutoff: string): Promise<Expiry> {
    return this.keeper.expire(cutoff);
  }

  /** TUL-007's SetSessionMode: checks the mode against the catalog, then writes it and its audit row together. */
  async setSessionMode(sessionId: string, mode: string, reason: string, org: string, user: string): Promise<void> {
    const record = this.store.record();
    if (!record || record.sessionId !== sessionId || record.org !== org) {
      throw new SessionModeError(sessionNotFound(sessionId).message);
    }
    const pin = this.pins.pin();
    if (pin) throw new SessionModeError(pinnedModeMessage(pin));
    const catalog = new D1AgentModeCatalogService(this.db, record.org);
    if (!(await catalog.getMode(mode))) throw new SessionModeError(await unknownModeMessage(catalog, mode));
    this.store.changeMode(mode, reason, user);
  }

  /** The WebSocket door: `GET /ws?ticket=...[&afterSeq=N]` (session-sockets.ts). */
  override async fetch(request: Request): Promise<Response> {
    if (this.keeper.gone()) return invalidTicketResponse();
    return this.sockets.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // A frame that reaches a session being deleted does nothing: its sockets are about to be told and closed.
    if (this.keeper.gone()) return;
    return this.sockets.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.sockets.close(ws, code);
  }

  /**
   * The session's alarm. A turn a restart cut off resumes, with no request (its frames reach the sockets that
   * reconnect); a turn running here keeps the alarm a little ahead; a paused turn's expiry settles its pending
   * calls unexecuted, and the session takes messages again.
   */
  override async alarm(): Promise<void> {
    this.alarmClock.fired();
    if (!this.store.record()) return;
    // Kept events go again beside the rest, the same messages (the consumer delivers each once per endpoint); a
    // failure keeps them for a later alarm and never stops a turn from resuming.
    const kept = this.outbox.flush();
    // Usage rows a stopped object left (or a failed batch kept) go to D1 with the list entry, as a turn's end writes.
    const rows = this.usage.waiting() ? this.list.flush() : Promise.resolve();
    try {
      if (this.driver.interrupted()) {
        await this.resumeTurn();
        return;
      }
      this.driver.expirePause();
      await this.driver.syncAlarm();
    } finally {
      await Promise.all([kept, rows]);
    }
  }

  /**
   * Resumes the turn a restart cut off. Its clients are told first (turn_resumed, with the text the cut-off model
   * call had streamed, which is void), then the turn goes on from its last stored step; the alarm's caller waits
   * for it (a failure is logged and ends the turn, as for any request, and is not retried by the alarm).
   */
  private async resumeTurn(): Promise<void> {
    const turnId = this.store.turn()?.turnId ?? "";
    try {
      await this.driver.resumeInterrupted(this.events.lastFrameAt(turnId), (resumes) => {
        this.logger.addCustomEvent("Warning", "[AgentSession_TurnResumed]", "A turn cut off by a restart resumes.", [
          ["TurnId", turnId],
          ["Resumes", String(resumes)],
        ]);
        this.emit({ type: "turn_resumed", turnId, resumes, discardedChars: this.events.streamedText(turnId).length });
      });
    } catch (error) {
      // A failure of the turn itself was logged by the driver, which ended the turn; one before it ran is here.
      if (this.driver.interrupted()) {
        this.logger.addException("[AgentSession_Resume__Exception]", error, [["TurnId", turnId]]);
      }
      await this.driver.failedToResume();
    }
  }

  /** Questions a tool's MCP server asks mid-call; they wait at most the pause TTL. */
  private desk(): ElicitationDesk {
    this.questions ??= new ElicitationDesk((frame) => this.emit(frame), settings(this.env).agent.pauseTtlMs);
    return this.questions;
  }

  /** A frame goes to the log, the sockets and streams, and (when it changes what the list shows) the owner's list. */
  private emit(frame: LoggedFrame): void {
    this.frames.emit(frame);
    this.list.noteFrame(frame);
    // The sockets that listen are their holders' as they stand now, checked as each turn starts.
    if (frame.type === "turn_started" && this.ctx.getWebSockets().length > 0) {
      this.ctx.waitUntil(this.sockets.recheck());
    }
  }

  /** The caller may read and act on the session: its owner, or an admin of its org (src/tenancy/ownership.ts). */
  private owned(caller: Caller): boolean {
    const record = this.store.record();
    const owned = !this.keeper.gone() && record !== null && mayActOnSession(caller, record);
    // Only the owner's bookmark moves the object's reads on.
    if (owned) this.db.advance(caller.bookmark);
    return owned;
  }

  private notFound() {
    return sessionNotFound(this.ctx.id.toString());
  }

  private view(): SessionView {
    const view = sessionView(this.store, branchOrigin(this.ctx.storage.sql), this.pins.pin()?.version ?? null);
    const question = this.desk().pending();
    return question ? { ...view, pendingElicitation: question } : view;
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

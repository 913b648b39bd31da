// One turn at a time in the session object: a request is admitted (turn-admission.ts) and drives the loop with a
// cancel switch; a turn that is starting or running refuses another; a request answers when its turn stops, or as
// soon as a tool's MCP server asks the user a question mid-call (the turn goes on and waits for the answer); a turn
// a restart of the object cut off resumes; the session's alarm follows the turn (a little ahead while it works, at
// a pause's expiry).
import type { AgentReasoner } from "../agent/agent-reasoner";
import { turnResponse } from "../agent/turn-ending";
import {
  cancelPausedTurn,
  expirePausedTurn,
  failBrokenTurn,
  mayResumeInterruptedTurn,
  pauseExpiresAt,
} from "../agent/turn-status";
import type { JsonAdminLogger } from "../observability/admin-logger";
import type { Outcome } from "../refusal";
import type { ElicitationAnswer } from "../wire/elicitation";
import type { AgentExecuteResponse, PendingElicitation } from "../wire/turn";
import { type Caller, callLogger } from "./caller";
import type { ElicitationDesk } from "./elicitations";
import type { ReasonerFactory, ReasonerOptions } from "./reasoner-factory";
import type { SessionAlarm } from "./session-alarm";
import type { SessionStore } from "./session-store";
import { type Admission, type AskFor, abandon, admit } from "./turn-admission";

export type TurnAction = (reasoner: AgentReasoner, signal: AbortSignal) => Promise<Outcome<AgentExecuteResponse>>;

export interface DriveOptions extends ReasonerOptions {
  /** The id the client gave its message (the socket door's user_message), echoed in turn_started. */
  clientMessageId?: string | null | undefined;
}

export interface TurnDriverDeps {
  store: SessionStore;
  reasoners: ReasonerFactory;
  desk: () => ElicitationDesk;
  alarm: SessionAlarm;
  logger: JsonAdminLogger;
  /** How many times a turn resumes by itself, and how far ahead the alarm is while a turn works. */
  resume: { maxResumes: number; checkMs: number };
  /** Called when a driven turn stops (ends or pauses), off its reply path: the conversation's compaction. */
  afterTurn?: (caller: Caller | undefined) => void;
}

/** While a turn waits for the answer to an MCP server's question, how far ahead the alarm is at least. */
const QUESTION_CHECK_MS = 60_000;

/**
 * Waits until the turn `running` drives has started (its message stored: `wait` from `nextStart()`, asked before the
 * drive) or has ended without starting (refused, broken), whichever comes first; true when it started. A door that
 * answers before the turn ends (a background turn, a stream) waits for this, so the person's words are in storage
 * before the answer goes out.
 */
export async function startedOrEnded(
  wait: ReturnType<TurnDriver["nextStart"]>,
  running: Promise<unknown>,
): Promise<boolean> {
  const started = await Promise.race([
    wait.started.then(() => true),
    running.then(
      () => false,
      () => false,
    ),
  ]);
  if (!started) wait.forget();
  return started;
}

export class TurnDriver {
  /** The running turn's cancel switch (a running turn keeps the object in memory). */
  private controller: AbortController | null = null;
  private activeTurnId: string | null = null;
  private messageId: string | null = null;
  /** The running turn, for a request that waits for it after answering a question the turn asked. */
  private running: Promise<Outcome<AgentExecuteResponse>> | null = null;
  /** An admission holds the session while its checks run (the key's limit, the budget), before its turn runs. */
  private held = false;
  /** Who waits for the next turn to start (nextStart). */
  private readonly startWaiters: (() => void)[] = [];

  constructor(private readonly deps: TurnDriverDeps) {}

  /** The running (or open) turn's id, "" when there is none. */
  turnId(): string {
    return this.activeTurnId ?? this.deps.store.turn()?.turnId ?? "";
  }

  /** The id of the turn that runs now, for a socket that connects mid-turn; null while none runs. */
  runningTurnId(): string | null {
    return this.deps.store.status() === "running" ? this.activeTurnId : null;
  }

  started(turnId: string): void {
    this.activeTurnId = turnId;
    for (const wake of this.startWaiters.splice(0)) wake();
  }

  /**
   * Resolves when the next turn has started: its message stored, `turn_started` told. For a door that answers before
   * the turn ends (a background turn): what the person wrote is in storage before their answer goes out. `forget`
   * drops the wait (the turn ended without starting: refused, or broken before it stored anything).
   */
  nextStart(): { started: Promise<void>; forget: () => void } {
    let wake = () => {};
    const started = new Promise<void>((resolve) => {
      wake = resolve;
    });
    this.startWaiters.push(wake);
    const forget = () => {
      const at = this.startWaiters.indexOf(wake);
      if (at >= 0) this.startWaiters.splice(at, 1);
    };
    return { started, forget };
  }

  clientMessageId(): string | null {
    return this.messageId;
  }

  /** A turn runs: `running` in storage, or still starting (admitted, or being admitted, before it writes `running`). */
  busy(): boolean {
    return this.deps.store.status() === "running" || this.running !== null || this.held;
  }

  /** Whether what a door asks may start or resume a turn now: the session's one admission (turn-admission.ts). */
  admit(askFor: AskFor, options: DriveOptions = {}): Promise<Outcome<Admission>> {
    return admit(
      {
        store: this.deps.store,
        held: () => this.running !== null || this.held,
        question: () => this.deps.desk().pending(),
        expirePause: () => this.expirePause(options.caller),
        hold: () => {
          this.held = true;
          let released = false;
          return () => {
            if (released) return;
            released = true;
            this.held = false;
          };
        },
        reasoner: () => this.deps.reasoners.reasoner(options),
      },
      askFor,
    );
  }

  /** Ends the paused turn if its pause has expired (lazily, on the next request, or from the alarm). */
  expirePause(caller?: Caller): void {
    this.activeTurnId = this.deps.store.turn()?.turnId ?? null;
    expirePausedTurn(this.deps.reasoners.ending(caller));
  }

  /**
   * The session's alarm: while a turn works (`working`; when not said, whether a turn runs here), `resume.checkMs`
   * ahead, so an object that stops mid-turn wakes by then; at a paused turn's expiry; else none.
   */
  syncAlarm(working = this.running !== null): Promise<void> {
    const { alarm, store, reasoners, resume, desk } = this.deps;
    // While the turn waits for the answer to an MCP server's question (up to a day), the object wakes once a minute.
    const ahead = desk().pending() ? Math.max(resume.checkMs, QUESTION_CHECK_MS) : resume.checkMs;
    if (working) return alarm.sync(Date.now() + ahead);
    return alarm.sync(pauseExpiresAt(store, reasoners.ending().config));
  }

  /** A turn `running` in storage that no one drives here: a restart of the object cut it off. */
  interrupted(): boolean {
    return this.running === null && this.deps.store.status() === "running";
  }

  /**
   * Resumes the turn a restart cut off, from its last stored step, acting for the caller its run acted for; past
   * the resume limit it ends as `turn_interrupted` instead (null). `resuming` is told first, with the number of
   * this resumption, before anything of the turn runs again.
   */
  async resumeInterrupted(
    lastSeenAt: number | null,
    resuming: (resumes: number) => void,
  ): Promise<Outcome<AgentExecuteResponse> | null> {
    const turn = this.deps.store.turn();
    if (!this.interrupted() || !turn) return null;
    // The turn's frames and stop event carry its id, whether it resumes or ends here (no run of this instance set it).
    this.activeTurnId = turn.turnId;
    const caller: Caller | undefined = turn.caller && { ...turn.caller, requestId: `resume-${turn.turnId}` };
    // A turn stored by code that kept no caller (before resumption existed) would run unmetered: it ends instead.
    const maxResumes = caller ? this.deps.resume.maxResumes : 0;
    if (!mayResumeInterruptedTurn(this.deps.reasoners.ending(caller), maxResumes)) {
      await this.syncAlarm();
      return null;
    }
    const { door } = turn;
    const options: DriveOptions = {
      caller,
      ...(door ? { clientTools: door.clientTools, declineElicitations: door.declineElicitations } : {}),
    };
    resuming((turn.resumes ?? 0) + 1);
    return this.run(
      this.deps.reasoners.reasoner(options),
      (r, signal) => r.resumeInterrupted(lastSeenAt, signal).then((value) => ({ ok: true, value })),
      options,
    );
  }

  /**
   * A resumption that failed before its turn ran (logged by the caller): the turn ends as broken, so the session
   * takes messages again, and the alarm follows.
   */
  async failedToResume(): Promise<void> {
    this.activeTurnId = this.deps.store.turn()?.turnId ?? this.activeTurnId;
    if (this.interrupted()) failBrokenTurn(this.deps.reasoners.ending());
    await this.syncAlarm();
  }

  /** A running turn is cancelled through its signal; a paused one is ended at once. */
  cancel(caller?: Caller): Outcome<unknown> {
    if (this.controller && this.deps.store.status() === "running") {
      this.controller.abort(new DOMException("The turn was cancelled.", "AbortError"));
      return { ok: true, value: null };
    }
    // The paused turn's frames and events carry its id, whichever turn this object drove last.
    this.activeTurnId = this.deps.store.turn()?.turnId ?? this.activeTurnId;
    // The alarm set for its expiry stays: when it fires, it finds nothing paused and is not set again.
    return cancelPausedTurn(this.deps.reasoners.ending(caller));
  }

  /** Cancels as cancel() does, and answers once a running turn has stopped (its end stored): the A2A door's CancelTask. */
  async cancelSettled(caller?: Caller): Promise<Outcome<unknown>> {
    const running = this.running;
    const outcome = this.cancel(caller);
    if (outcome.ok && running) {
      await running.then(
        () => undefined,
        () => undefined,
      );
    }
    return outcome;
  }

  /** Ends the running turn, if one runs (as a cancel does), once it has stopped writing: the session is deleted next. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.controller?.abort(new DOMException("The session was deleted.", "AbortError"));
    await running.then(
      () => undefined,
      () => undefined,
    );
  }

  /** What a door asks, admitted and then driven: the refusal, or the turn's answer. */
  async turn(askFor: AskFor, options: DriveOptions = {}): Promise<Outcome<AgentExecuteResponse>> {
    const admitted = await this.admit(askFor, options);
    return admitted.ok ? this.drive(admitted.value, options) : admitted;
  }

  /** Drives an admitted turn with its reasoner and a cancel switch; its admission's hold passes to the running turn. */
  drive(admission: Admission, options: DriveOptions = {}): Promise<Outcome<AgentExecuteResponse>> {
    const { ask, reasoner, first } = admission;
    let action: TurnAction;
    switch (ask.kind) {
      case "message":
        action = (r, signal) =>
          r.startTurn(ask.content, signal, { attachments: ask.attachments, ...(first ? { first } : {}) });
        break;
      case "approvals":
        action = (r, signal) => r.applyApprovals(ask.decisions, signal);
        break;
      case "tool_results":
        action = (r, signal) => r.applyToolResults(ask.results, signal);
        break;
      case "workflow":
        admission.release();
        throw new Error("A workflow is run by the workflow runner, not driven as a turn.");
    }
    if (!reasoner) {
      abandon(admission);
      throw new Error("An admitted turn has its reasoner.");
    }
    return this.run(reasoner, action, options, admission);
  }

  private async run(
    reasoner: AgentReasoner,
    action: TurnAction,
    options: DriveOptions,
    admission?: Admission,
  ): Promise<Outcome<AgentExecuteResponse>> {
    const controller = new AbortController();
    this.controller = controller;
    this.messageId = options.clientMessageId ?? null;
    this.activeTurnId = this.deps.store.turn()?.turnId ?? null;
    let next: ReturnType<ElicitationDesk["nextQuestion"]>;
    let armed: Promise<void>;
    try {
      next = this.deps.desk().nextQuestion();
      this.deps.reasoners.keepOpen();
      // The alarm that wakes the object should it stop mid-turn; written beside the turn's first writes, not
      // awaited before its first model call.
      armed = this.syncAlarm(true);
    } catch (error) {
      // Nothing ran: the session is not left held (busy until evicted) nor the first call's budget reserved.
      if (admission) abandon(admission);
      throw error;
    }
    const running = (async () => {
      try {
        return await action(reasoner, controller.signal);
      } catch (error) {
        // Whoever waits for the turn (maybe no one, once it answered `awaiting_input`) gets the failure; the turn
        // itself is ended, so the session does not stay `running`.
        callLogger(this.deps.logger, options.caller).addException("[AgentSession_Turn__Exception]", error);
        failBrokenTurn(this.deps.reasoners.ending(options.caller));
        throw error;
      } finally {
        if (this.controller === controller) this.controller = null;
        this.deps.reasoners.closeWhenIdle();
      }
    })();
    this.running = running;
    admission?.release();
    // Handled either way: a failure nobody awaits any more is logged above, not left unhandled. After the reply
    // (not before it): the alarm follows the stopped turn (a pause's expiry, or none; still ahead if another turn
    // started meanwhile), and the conversation's compaction may start.
    const ended = () => {
      if (this.running === running) this.running = null;
      void this.afterStop(armed, options.caller);
    };
    running.then(ended, ended);
    try {
      return await this.untilStopOrQuestion(running, next.asked);
    } finally {
      next.dispose();
    }
  }

  private async afterStop(armed: Promise<void>, caller: Caller | undefined): Promise<void> {
    try {
      await armed;
      await this.syncAlarm();
    } catch (error) {
      callLogger(this.deps.logger, caller).addException("[AgentSession_Alarm__Exception]", error);
    }
    this.deps.afterTurn?.(caller);
  }

  /**
   * The user's answer to the question a tool's MCP server asks mid-call. The call goes on; the answer returns when
   * the turn next stops (an answer, a pause, or another question).
   */
  async answerElicitation(elicitationId: string, answer: ElicitationAnswer): Promise<Outcome<AgentExecuteResponse>> {
    const running = this.running;
    const next = this.deps.desk().nextQuestion();
    try {
      const refused = this.deps.desk().answer(elicitationId, answer);
      if (refused) return refused;
      if (!running) throw new Error("A question was waiting with no turn running.");
      return await this.untilStopOrQuestion(running, next.asked);
    } finally {
      next.dispose();
    }
  }

  /**
   * What a request to a running turn answers: the turn's end or pause, or, when a tool's MCP server asks the user a
   * question first, `awaiting_input` with the question (the turn goes on and waits for the answer).
   */
  private async untilStopOrQuestion(
    running: Promise<Outcome<AgentExecuteResponse>>,
    asked: Promise<PendingElicitation>,
  ): Promise<Outcome<AgentExecuteResponse>> {
    const first = await Promise.race([running, asked.then((question) => ({ question }))]);
    if (!("question" in first)) return first;
    const turn = this.deps.store.turn();
    if (!turn) throw new Error("A question was asked with no turn open.");
    return {
      ok: true,
      value: {
        ...turnResponse(this.deps.store, turn, "awaiting_input", turn.text ?? ""),
        elicitation: first.question,
      },
    };
  }
}

// The A2A door's request handler (the SDK's A2ARequestHandler, behind its JSON-RPC transport and our HTTP+JSON
// routes): a context is a session, a task is a turn, run by the session's object as every door's turns are (admitted
// there, metered, budgeted, traced, paused for approvals). The SDK's DefaultRequestHandler is not used: it runs an
// executor inside the request with an in-memory event bus and keeps whole tasks in a TaskStore, where here the turn
// lives in its session's object, outlives the request (a background task), and is read from there; a second copy of
// it in a task store would be a second home for the same job. What is indexed (src/a2a/task-index.ts) is only which
// session holds a task, and whose it is.
import {
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
  TaskState,
} from "@a2a-js/sdk";
import {
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { Db } from "../db";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { quoted } from "../quote";
import type { Outcome } from "../refusal";
import { decisionsFromWords } from "../session/approval-words";
import type { Caller } from "../session/caller";
import { createSession, sessionStubOrNull } from "../session/session-client";
import type { AgentExecuteResponse, TurnAccepted, TurnStatus } from "../wire/turn";
import { extendedAgentCard, publicAgentCard } from "./agent-card";
import { askedSkill, type MessageInput, readInput } from "./message-input";
import { PushConfigs } from "./push-configs";
import { orThrow } from "./refusals";
import { findTask, type IndexedTask, indexTask, listTasks } from "./task-index";
import {
  answerArtifact,
  snapshotOf,
  statusOf,
  TERMINAL_STATES,
  type TurnSnapshot,
  taskOf,
  turnStatusOf,
} from "./task-shapes";
import { snapshotOfResponse, turnStreamEvents } from "./turn-stream";

/** What the handler acts for: the request's caller, where it runs, and its reads of D1. */
export interface A2ACall {
  env: Cloudflare.Env;
  /** The request's D1 session (c.get("db")). */
  db: Db;
  caller: Caller;
  /** The Worker's origin, for the card's URLs. */
  origin: string;
  locationHint?: DurableObjectLocationHint | undefined;
  /** The request's log (a context this request made and could not take back is logged). */
  logger?: AdminLogger;
}

const DEFAULT_PAGE_SIZE = 50;

const now = () => new Date().toISOString();

export class AptixA2AHandler implements A2ARequestHandler {
  constructor(private readonly call: A2ACall) {}

  getAgentCard(): Promise<AgentCard> {
    return publicAgentCard(this.call.db, this.call.origin);
  }

  getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    _context: ServerCallContext,
  ): Promise<AgentCard> {
    return extendedAgentCard(this.call.db, this.call.origin, this.call.caller.org);
  }

  async sendMessage(params: SendMessageRequest, _context: ServerCallContext): Promise<Task> {
    const input = readInput(params);
    const background = params.configuration?.returnImmediately === true;
    if (input.message.taskId) return this.continueTask(input, background);
    const { sessionId, made } = await this.contextOf(params, input.message);
    const stub = this.stub(sessionId);
    if (background) {
      const started = await stub.startTurn(this.call.caller, { kind: "message", content: input.text });
      const accepted = orThrow(await this.unlessRefused(made, sessionId, started));
      await this.index(sessionId, accepted.turnId);
      return taskOf({ ...accepted, text: "", pending: null, error: null, at: now() });
    }
    const frames = orThrow(
      await this.unlessRefused(
        made,
        sessionId,
        await stub.sendMessageStream(this.call.caller, input.text, [], { refusalFirst: true }),
      ),
    );
    let turnId = "";
    for await (const event of turnStreamEvents(frames, sessionId, now)) {
      if (event.kind === "started") {
        turnId = event.turnId;
        await this.index(sessionId, turnId);
      }
      if (event.kind === "stopped") return taskOf(event.turn);
    }
    // A turn that pauses (for approvals, for a client's results) ends its frames without ending: its status says why.
    if (!turnId) throw new Error("The turn's frames ended before the turn started.");
    return taskOf(snapshotOf(await this.status({ sessionId, taskId: turnId })));
  }

  async *sendMessageStream(params: SendMessageRequest, _context: ServerCallContext): AsyncGenerator<StreamResponse> {
    const input = readInput(params);
    if (input.message.taskId) {
      yield { payload: { $case: "task", value: await this.continueTask(input, false) } };
      return;
    }
    const { sessionId, made } = await this.contextOf(params, input.message);
    const opened = await this.stub(sessionId).sendMessageStream(this.call.caller, input.text, [], {
      refusalFirst: true,
    });
    const frames = orThrow(await this.unlessRefused(made, sessionId, opened));
    yield* this.taskEvents(turnStreamEvents(frames, sessionId, now), sessionId, null);
  }

  async getTask(params: GetTaskRequest, _context: ServerCallContext): Promise<Task> {
    const task = await this.find(params.id);
    return taskOf(snapshotOf(await this.status(task)));
  }

  async listTasks(params: ListTasksRequest, _context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
      throw new RequestMalformedError("pageSize must be between 1 and 100.");
    }
    const offset = params.pageToken ? Number(params.pageToken) : 0;
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new RequestMalformedError("pageToken must be the nextPageToken of an earlier page.");
    }
    if (params.status === TaskState.UNRECOGNIZED) {
      throw new RequestMalformedError(
        "status must be a task state, such as TASK_STATE_WORKING or TASK_STATE_COMPLETED.",
      );
    }
    const wanted = params.status === TaskState.TASK_STATE_UNSPECIFIED ? null : turnStatusOf(params.status);
    if (params.status !== TaskState.TASK_STATE_UNSPECIFIED && wanted === null) {
      return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
    }
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : null;
    if (after !== null && Number.isNaN(after)) {
      throw new RequestMalformedError("statusTimestampAfter must be an ISO 8601 time.");
    }
    const page = await listTasks(this.call.db, this.call.caller, {
      sessionId: params.contextId || null,
      pageSize,
      offset,
    });
    const statuses = await Promise.all(page.tasks.map((task) => this.status(task).catch(() => null)));
    const tasks = statuses
      .filter((status): status is TurnStatus => status !== null)
      .filter((status) => wanted === null || status.status === wanted)
      .map(snapshotOf)
      .filter((turn) => after === null || Date.parse(turn.at) > after)
      .map(taskOf)
      .map((task) => (params.includeArtifacts ? task : { ...task, artifacts: [] }));
    return { tasks, nextPageToken: page.nextPageToken, pageSize, totalSize: page.totalSize };
  }

  async cancelTask(params: CancelTaskRequest, _context: ServerCallContext): Promise<Task> {
    const task = await this.find(params.id);
    const status = await this.status(task);
    if (TERMINAL_STATES.has(taskOf(snapshotOf(status)).status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) {
      throw new TaskNotCancelableError(`Task ${quoted(task.taskId)} has ${status.status}: it cannot be cancelled.`);
    }
    return taskOf(snapshotOf(orThrow(await this.stub(task.sessionId).cancelTurn(this.call.caller, task.taskId))));
  }

  async *resubscribe(params: SubscribeToTaskRequest, _context: ServerCallContext): AsyncGenerator<StreamResponse> {
    const task = await this.find(params.id);
    const status = await this.status(task);
    const snapshot = snapshotOf(status);
    if (TERMINAL_STATES.has(taskOf(snapshot).status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) {
      throw new UnsupportedOperationError(
        `Task ${quoted(task.taskId)} has ${status.status}: there is nothing to follow.`,
      );
    }
    if (status.status !== "running") {
      yield { payload: { $case: "task", value: taskOf(snapshot) } };
      return;
    }
    const frames = orThrow(await this.stub(task.sessionId).followTurn(this.call.caller, task.taskId));
    yield* this.taskEvents(turnStreamEvents(frames, task.sessionId, now), task.sessionId, snapshot);
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    _context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs().create(await this.find(params.taskId), params);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    _context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs().get(await this.find(params.taskId), params.id);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    _context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const configs = await this.pushConfigs().list(await this.find(params.taskId));
    return { configs, nextPageToken: "" };
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    _context: ServerCallContext,
  ): Promise<void> {
    await this.pushConfigs().delete(await this.find(params.taskId), params.id);
  }

  private pushConfigs(): PushConfigs {
    return new PushConfigs(this.call.env, this.call.db, this.call.caller);
  }

  /**
   * A turn's events as A2A's stream: the task first (when `known` is null, once the turn has started), then the
   * answer's text as updates of its `answer` artifact, and the task's status where the turn stopped.
   */
  private async *taskEvents(
    events: ReturnType<typeof turnStreamEvents>,
    sessionId: string,
    known: TurnSnapshot | null,
  ): AsyncGenerator<StreamResponse> {
    let turnId = known?.turnId ?? "";
    if (known) yield { payload: { $case: "task", value: taskOf(known) } };
    let chunks = 0;
    for await (const event of events) {
      if (event.kind === "started" && !known) {
        turnId = event.turnId;
        await this.index(sessionId, turnId);
        const started: TurnSnapshot = {
          sessionId,
          turnId,
          status: "running",
          text: "",
          pending: null,
          error: null,
          at: now(),
        };
        yield { payload: { $case: "task", value: taskOf(started) } };
      } else if (event.kind === "text" && turnId) {
        const artifact = answerArtifact(turnId, event.replace ? event.text : event.delta);
        const append = chunks > 0 && !event.replace;
        chunks += 1;
        yield {
          payload: {
            $case: "artifactUpdate",
            value: { taskId: turnId, contextId: sessionId, artifact, append, lastChunk: false, metadata: undefined },
          },
        };
      } else if (event.kind === "stopped") {
        yield this.statusUpdate(event.turn.turnId ? event.turn : { ...event.turn, turnId });
        return;
      }
    }
    // A turn that pauses ends its frames without ending: its status says what it waits for.
    if (turnId) yield this.statusUpdate(snapshotOf(await this.status({ sessionId, taskId: turnId })));
  }

  private statusUpdate(turn: TurnSnapshot): StreamResponse {
    const value = { taskId: turn.turnId, contextId: turn.sessionId, status: statusOf(turn), metadata: undefined };
    return { payload: { $case: "statusUpdate", value } };
  }

  /**
   * A message on a task that waits for input: the words that decide its approvals (yes, no, or anything else:
   * src/session/approval-words.ts), or a client's results in a data part. A task that waits for nothing takes none.
   */
  private async continueTask(input: MessageInput, background: boolean): Promise<Task> {
    const task = await this.find(input.message.taskId);
    if (input.message.contextId && input.message.contextId !== task.sessionId) {
      throw new RequestMalformedError(
        `message.contextId ${quoted(input.message.contextId)} is not the context of task ${quoted(task.taskId)}.`,
      );
    }
    const status = await this.status(task);
    if (status.status !== "paused" || !status.pending) {
      throw new UnsupportedOperationError(
        `Task ${quoted(task.taskId)} is ${status.status} and waits for no input; send a message without taskId for a new task.`,
      );
    }
    const stub = this.stub(task.sessionId);
    const approvals = status.pending.approvals.filter((call) => call.approval === "pending");
    const caller = this.call.caller;
    let response: AgentExecuteResponse;
    if (approvals.length > 0) {
      if (!input.text) throw new RequestMalformedError("This task waits for approval: answer in words (yes or no).");
      const decisions = decisionsFromWords(input.text, approvals);
      if (background) return this.accepted(await stub.startTurn(caller, { kind: "approvals", decisions }), task);
      response = orThrow(await stub.submitApprovals(caller, decisions));
    } else {
      if (!input.results) {
        throw new RequestMalformedError(
          'This task waits for a client\'s results: send them in a data part {"results":[{"toolCallId","resultJson"|"errorMessage"}]}.',
        );
      }
      if (background)
        return this.accepted(await stub.startTurn(caller, { kind: "tool_results", results: input.results }), task);
      response = orThrow(await stub.submitToolResults(caller, input.results));
    }
    return taskOf(snapshotOfResponse(task.taskId, response, now()));
  }

  private accepted(outcome: Outcome<TurnAccepted>, task: IndexedTask): Task {
    const accepted = orThrow(outcome);
    return taskOf({
      sessionId: accepted.sessionId,
      turnId: task.taskId,
      status: "running",
      text: "",
      pending: null,
      error: null,
      at: now(),
    });
  }

  /**
   * The context a new task runs in: the one named (the caller's, or not found), or a new session in the skill's mode
   * (`made`: taken back if its turn is refused).
   */
  private async contextOf(params: SendMessageRequest, message: Message): Promise<{ sessionId: string; made: boolean }> {
    const { env, caller } = this.call;
    if (message.contextId) {
      const stub = sessionStubOrNull(env, message.contextId);
      const found = stub ? await stub.getSession(caller) : null;
      if (!found?.ok) throw new TaskNotFoundError(`Context ${quoted(message.contextId)} not found.`);
      return { sessionId: message.contextId, made: false };
    }
    const skill = askedSkill(params, message);
    const catalog = new D1AgentModeCatalogService(this.call.db, caller.org);
    const mode = skill ? await catalog.getMode(skill) : await catalog.getDefaultMode();
    if (!mode) {
      const known = (await catalog.getAllModes()).map((m) => m.key).join(", ");
      throw new RequestMalformedError(`Unknown skill ${quoted(skill ?? "")}; the skills are: ${known}.`);
    }
    const session = await createSession(env, caller, mode.key, this.call.locationHint);
    return { sessionId: session.sessionId, made: true };
  }

  /**
   * A context this request made is taken back when its first turn is refused (the key's limit, the budget): the
   * refusal names no context, so it would stay in the person's list unseen, one more at each try.
   */
  private async unlessRefused<T>(made: boolean, sessionId: string, outcome: Outcome<T>): Promise<Outcome<T>> {
    if (!made || outcome.ok) return outcome;
    // The refusal is the answer whatever happens here: a context not taken back is logged, not answered.
    try {
      const dropped = await this.stub(sessionId).deleteSession(this.call.caller);
      if (!dropped.ok) throw new Error(dropped.message);
    } catch (error) {
      this.call.logger?.addException("[a2a_refused_context]", error);
    }
    return outcome;
  }

  private stub(sessionId: string) {
    const stub = sessionStubOrNull(this.call.env, sessionId);
    if (!stub) throw new TaskNotFoundError(`Context ${quoted(sessionId)} not found.`);
    return stub;
  }

  /** The task, when the caller may see it; TaskNotFound for anyone else's, as for one that never was. */
  private async find(taskId: string): Promise<IndexedTask> {
    if (!taskId.trim()) throw new RequestMalformedError("The task's id is required.");
    const task = await findTask(this.call.db, this.call.caller, taskId);
    if (!task) throw new TaskNotFoundError(`Task ${quoted(taskId)} not found.`);
    return task;
  }

  private async status(task: Pick<IndexedTask, "sessionId" | "taskId">): Promise<TurnStatus> {
    return orThrow(await this.stub(task.sessionId).turnStatus(this.call.caller, task.taskId));
  }

  private index(sessionId: string, turnId: string): Promise<void> {
    const { org, user } = this.call.caller;
    return indexTask(this.call.db, { taskId: turnId, sessionId, org, user, createdAt: now() });
  }
}

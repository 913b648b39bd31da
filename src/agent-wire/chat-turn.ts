// One turn of the agent through its doors (/agent/v1): the chat completions door, and the Responses and Messages
// doors that translate their requests to a chat completions request and run it here (a door is one way in that a
// client speaks to the agent). The request's model names the mode; its history (or the session it names) says
// which session it continues; the client's tools are checked against the tool contract. The answer is a chat
// completion, or the turn's chunks as objects for each wire to write.

import { BOOKMARK_HEADER } from "../db";
import { ApiError } from "../errors";
import type { AppContext } from "../http";
import { takeModelCall } from "../metering/model-call-limit";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { quoted } from "../quote";
import { type Outcome, refuse, sessionNotFound } from "../refusal";
import type { ChatTurn, ChatTurnAnswer, ChatTurnAnswerBefore, HeadMoved } from "../session/chat-turns";
import { doorReply } from "../session/door-answer";
import { callerOf, hintOf, placement, sessionStubOrNull, unwrap } from "../session/session-client";
import { cachedTurnReads, readTurnReads } from "../session/session-model";
import {
  EMPTY_FINGERPRINT,
  fingerprintChain,
  headAfter,
  headStatement,
  type ThreadPlace,
} from "../session/thread-head";
import { settings } from "../settings";
import { clientFunctionTool, clientToolRegistry } from "../tools/client-function-tool";
import { AgentToolContractError } from "../tools/registry";
import type { CompletionBase, OpenAIToolCall } from "../wire/openai";
import {
  completionJson,
  completionMeta,
  type DoorStreamItem,
  doorChunks,
  retryHeaders,
  turnFailure,
} from "./completion";
import { modeKeyOfModel, modelOfMode } from "./models";
import { forgetHead, lookUpThread, newThread, rememberHead, type Thread, threadAtOnce } from "./threads";
import { type AgentChatBody, declaredTools, meaningOf, trailingInput } from "./transcript";

/** The header that names the session a request continues, and that every answer carries. */
export const SESSION_HEADER = "X-Aptix-Session";

export async function modelNotFound(c: AppContext, model: string): Promise<never> {
  const modes = await new D1AgentModeCatalogService(c.get("db"), c.get("principal").org).getAllModes();
  const known = modes.map((m) => modelOfMode(m).id).join(", ");
  throw new ApiError("model_not_found", `Model ${quoted(model)} not found; the agent's models are: ${known}.`, {
    param: "model",
  });
}

/**
 * The mode and base prompt of a turn: this isolate's copy (MODES_CACHE_MS), unless the client sent a D1
 * bookmark, which asks to read at least what its last answer had seen (its own writes included).
 */
function turnReadsOf(c: AppContext, key: string) {
  const { org } = c.get("principal");
  if (c.req.header(BOOKMARK_HEADER)) return readTurnReads(c.get("db"), org, key);
  return cachedTurnReads(c.env.DB, c.get("db"), org, key, settings(c.env).modes.cacheMs);
}

/**
 * The client's tools, each checked against the tool contract and against the built-in tools' names (400 naming
 * the first bad one), in a registry that makes none of the built-in tools.
 */
function checkClientTools(c: AppContext, body: AgentChatBody) {
  const declared = declaredTools(body);
  if (declared.length === 0) return declared;
  const registry = clientToolRegistry(c.get("logger"));
  declared.forEach((tool, index) => {
    try {
      registry.registerTool(clientFunctionTool(tool));
    } catch (error) {
      if (!(error instanceof AgentToolContractError)) throw error;
      throw new ApiError("invalid_request", `Invalid 'tools.${index}': ${error.message}`, { param: `tools.${index}` });
    }
  });
  return declared;
}

/** Where a door's turn is: its session, and the head after its answer (the session's latest answer). */
export interface TurnPlace {
  sessionId: string;
  /** The session's head after this answer (agent_threads.head), once answered; a Responses door's response keeps it. */
  head: () => string | null;
  /** The turn that answered, once answered. */
  turnId: () => string | null;
  /** D1 took the head with the session's list entry (else a door that keeps the answer writes it with its own rows). */
  headWritten: () => boolean;
}

export type ChatTurnOutcome =
  | { kind: "answer"; place: TurnPlace; completion: ReturnType<typeof completionJson> }
  | { kind: "stream"; place: TurnPlace; items: AsyncGenerator<DoorStreamItem> };

export interface ChatTurnRequest {
  body: AgentChatBody;
  /**
   * The session this request continues, as named by the client (X-Aptix-Session, or a Responses previous_response_id,
   * looked up while the turn's other reads run; its refusal refuses the request).
   */
  sessionId: string | null | Promise<string | null>;
  /** With a stream: the usage chunk at its end. */
  includeUsage: boolean;
}

/**
 * One turn of the agent for a chat completions request: the mode, the session, the client's tools, the key's model
 * call budget; then the session's object runs the turn. Bad input and a failed turn throw ApiError (OpenAI's
 * shape, the session header on a failed turn). The session records the conversation's head (with its list entry, one D1
 * write) before the answer goes out.
 */
export async function runChatTurn(c: AppContext, request: ChatTurnRequest): Promise<ChatTurnOutcome> {
  const { body } = request;
  const { keyId, org, user } = c.get("principal");
  const key = modeKeyOfModel(body.model);
  const clientTools = checkClientTools(c, body);
  const meanings = body.messages.map(meaningOf);
  const input = trailingInput(meanings);
  if ("problem" in input) {
    throw new ApiError("invalid_request", `Invalid '${input.param}': ${input.problem}.`, { param: input.param });
  }
  // At once: the mode and base prompt (an isolate's copy, or one round trip to D1), the key's model call budget for
  // the turn's first call, and the session the history belongs to (D1 read only when no one names or knows it). The
  // first model call then starts without a read.
  const chain = fingerprintChain(meanings);
  const [reads, grant, first, fingerprints] = await Promise.all([
    key ? turnReadsOf(c, key) : null,
    takeModelCall(c.env.MODEL_CALL_LIMITER, keyId, c.get("logger")),
    Promise.all([chain, request.sessionId]).then(
      ([fingerprints, named]) =>
        threadAtOnce(keyId, named, meanings, fingerprints, input) ??
        lookUpThread(c.env.DB, keyId, meanings, fingerprints, input),
    ),
    chain,
  ]);
  const mode = reads?.mode;
  if (!reads || !mode) return modelNotFound(c, body.model);
  if (first.kind === "refused") throw new ApiError("invalid_request", first.message, { param: first.param });
  if (!grant.ok) {
    throw ApiError.from(refuse("rate_limit_exceeded", grant.message, { retryAfterSeconds: grant.retryAfterSeconds }));
  }
  const names = new Set(clientTools.map((t) => t.function.name));
  const meta = completionMeta(body.model);
  const after = fingerprints.at(-1) ?? EMPTY_FINGERPRINT;
  const ask = (thread: Exclude<Thread, { kind: "refused" }>) => {
    // A new session is created by the turn's own call to its object.
    const sessionId = thread.kind === "continue" ? thread.sessionId : c.env.AGENT_SESSION.newUniqueId().toString();
    const stub =
      thread.kind === "continue"
        ? sessionStubOrNull(c.env, sessionId)
        : c.env.AGENT_SESSION.get(c.env.AGENT_SESSION.idFromString(sessionId), placement(hintOf(c)));
    const turn: ChatTurn = {
      input:
        input.type === "message"
          ? { type: "message", content: input.content }
          : { type: "tool_results", results: input.results },
      seed: thread.kind === "new" ? thread.seed : [],
      clientTools,
      reads: { mode, basePrompt: reads.basePrompt },
      prepaid: true,
      ...(thread.kind === "new" ? { create: { org, user, mode: mode.key } } : {}),
      thread: { keyId, after },
      ...(thread.kind === "continue" && thread.expect !== undefined ? { expect: thread.expect } : {}),
    };
    return { sessionId, stub, turn };
  };
  // The session's answer; when the history proves not to end at the session's head, the history's session anew.
  let thread: Thread = first;
  for (;;) {
    if (thread.kind === "refused") throw new ApiError("invalid_request", thread.message, { param: thread.param });
    const { sessionId, stub, turn } = ask(thread);
    const answered = stub
      ? body.stream
        ? await stub.chatTurnStream(callerOf(c), turn)
        : await stub.chatTurn(callerOf(c), turn)
      : null;
    if (thread.kind === "continue" && isMoved(thread, answered)) {
      if (thread.otherwise === "lookup" && thread.expect !== undefined) {
        forgetHead(keyId, thread.expect);
        thread = await lookUpThread(c.env.DB, keyId, meanings, fingerprints, input, thread.sessionId);
      } else thread = newThread(meanings, input);
      continue;
    }
    if (answered === null || "headMoved" in answered) throw ApiError.from(sessionNotFound(sessionId));
    return answerOf(c, {
      sessionId,
      thread: { keyId, after },
      before: turn.expect,
      answered,
      meta,
      names,
      includeUsage: request.includeUsage,
    });
  }
}

/**
 * Whether a continued session proved not to be the history's: its head (of this key) is another, or the header
 * names no session at all. A session of another org or person has another key's head: rule 3 of
 * docs/agent-openai.md, a new session. One deleted has its head still, and is answered 404.
 */
function isMoved(
  thread: Extract<Thread, { kind: "continue" }>,
  answered: Outcome<ChatTurnAnswer | ReadableStream<Uint8Array>> | HeadMoved | null,
): boolean {
  if (answered === null) return thread.expect !== undefined;
  return "headMoved" in answered;
}

/** The session's answer as the door gives it: a completion, or its chunks; the session's head remembered. */
async function answerOf(
  c: AppContext,
  a: {
    sessionId: string;
    thread: ThreadPlace;
    before: string | undefined;
    answered: Outcome<ChatTurnAnswer | ReadableStream<Uint8Array>>;
    meta: CompletionBase;
    names: ReadonlySet<string>;
    includeUsage: boolean;
  },
): Promise<ChatTurnOutcome> {
  const { sessionId, meta } = a;
  const { keyId } = a.thread;
  const headers = { [SESSION_HEADER]: sessionId };
  let head: string | null = null;
  let headWritten = false;
  let turnId: string | null = null;
  const place: TurnPlace = { sessionId, head: () => head, turnId: () => turnId, headWritten: () => headWritten };
  // A session object of the version before (a deploy's few minutes) answers without the reply and the head.
  const answered: ChatTurnAnswer | ChatTurnAnswerBefore | ReadableStream<Uint8Array> = unwrap(a.answered);
  const ended = async (said: {
    turnId: string | null;
    head: string | null | undefined;
    headWritten: boolean;
    content: string;
    toolCalls: OpenAIToolCall[];
  }) => {
    turnId = said.turnId;
    if (said.head === undefined) {
      // That version's session records no head: written here, as that version's Worker did.
      head = await headAfter(a.thread, said.content, said.toolCalls);
      await headStatement(c.env.DB, sessionId, keyId, head).run();
      headWritten = true;
    } else {
      head = said.head;
      headWritten = said.headWritten;
    }
    if (head !== null) rememberHead(keyId, sessionId, head, a.before);
  };
  if (answered instanceof ReadableStream) {
    const items = doorChunks(answered, meta, {
      clientTools: a.names,
      includeUsage: a.includeUsage,
      onEnd: ended,
      onBreak: (error) => c.get("logger").addException("AgentWire_Stream", error, [["sessionId", sessionId]]),
    });
    return { kind: "stream", place, items };
  }
  const failure = turnFailure(answered.response);
  if (failure) throw new ApiError(failure.code, failure.message, { headers: { ...headers, ...retryHeaders(failure) } });
  const reply =
    "reply" in answered
      ? answered.reply
      : doorReply(answered.response, answered.content, answered.waitingForClient, a.names);
  await ended({
    turnId: answered.turnId,
    head: "head" in answered ? answered.head : undefined,
    headWritten: "headWritten" in answered ? answered.headWritten : false,
    ...reply,
  });
  return {
    kind: "answer",
    place,
    completion: completionJson(meta, reply.content, reply.toolCalls, answered.usage),
  };
}

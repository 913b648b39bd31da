// The loop's model step: one call on the mode's route (or its fallbacks), reserved in the org's meter and within
// what is left of the turn's working time, and what the answer means for the turn: the answer, tool calls to
// run, a malformed JSON-format call sent back for correction, or a failure with its cause.
import { type ChatResponse, ModelError } from "../llm/chat-model";
import { refusedPromptTokens } from "../llm/context-refusal";
import { deadline } from "../llm/deadline";
import type { AdminLogger } from "../observability/admin-logger";
import type { TurnObserver } from "../observability/turn-observer";
import type { ModelRouter, ServedBy } from "../routing/model-router";
import { addUsage } from "../wire/turn";
import type { AgentConfig } from "./agent-config";
import { correctionRequest } from "./json-tool-call";
import type { TurnMeter } from "./model-call-budget";
import { type ModelRequest, readModelStep } from "./model-step";
import { NEXT_MODEL_CALL, type NextStep, type Run } from "./next-step";
import { checkFit } from "./request-fit";
import type { TokenCalibration } from "./token-calibration";
import { CANCELLED, limitError } from "./turn-ending";
import type { TurnEvents } from "./turn-events";
import { blockedError, type TurnGuardrails } from "./turn-guardrails";
import type { TurnLimit } from "./turn-limits";
import type { TurnState, TurnStore } from "./turn-store";

export interface AskModelDeps {
  store: TurnStore;
  router: ModelRouter;
  config: AgentConfig;
  logger: AdminLogger;
  events?: TurnEvents | undefined;
  meter?: TurnMeter | undefined;
  /** The token estimate calibrated per route from the usage each answer reports. */
  calibration?: TokenCalibration | undefined;
  /** Hears each model call (the turn's timeline and trace). */
  observer?: TurnObserver | undefined;
  /** The turn's guardrails: the answer checked before the person gets it, a mask's placeholders restored. */
  guard?: TurnGuardrails | undefined;
  now: () => number;
}

const MALFORMED_LOG_CHARS = 2_000;

/** Working time: what earlier runs of the turn worked, plus this run so far. Pauses are not counted. */
export function workedMs(turn: TurnState, run: Run, now: number): number {
  return (turn.workedMs ?? 0) + (now - run.since);
}

/** A limit stops the turn: logged with its figure, and the run ends failed. */
export function limitStep(
  deps: Pick<AskModelDeps, "store" | "config" | "logger">,
  turn: TurnState,
  limit: TurnLimit,
  figure: number,
  detail?: string,
): NextStep {
  return { type: "fail", outcome: "failed", error: limitError(deps, turn, limit, figure, detail) };
}

/** Asks the model for the turn's next step, with the request built for it. */
export async function askModel(
  deps: AskModelDeps,
  turn: TurnState,
  run: Run,
  request: ModelRequest,
): Promise<NextStep> {
  // An output guardrail that blocks or redacts holds the step's text until it is checked (streams get it whole).
  const hold = deps.guard ? await deps.guard.holdsOutput() : false;
  const called = await callModel(deps, turn, run, request, hold);
  if (called.type !== "model_answered") return called;
  return readAnswer(deps, turn, request, called.response, called.route, hold);
}

/** How the model's streamed text reaches the turn's listeners: held, or with a mask's placeholders restored. */
function textStream(deps: AskModelDeps, hold: boolean) {
  const { events, guard } = deps;
  const none = { flush: () => undefined, restart: () => undefined };
  if (!events?.assistantDelta) return { options: {}, ...none };
  if (hold) return { options: { onTextDelta: () => undefined }, ...none };
  if (!guard) return { options: { onTextDelta: (t: string) => events.assistantDelta?.(t) }, ...none };
  return {
    options: {
      onTextDelta: (t: string) => {
        const shown = guard.restoreStream(t);
        if (shown) events.assistantDelta?.(shown);
      },
    },
    flush: () => {
      const rest = guard.flushStream();
      if (rest) events.assistantDelta?.(rest);
    },
    // A stream that broke off is void: what it held back is dropped with it.
    restart: () => {
      guard.flushStream();
    },
  };
}

/**
 * What the person gets of the model's text: checked by the `output` guardrails (a block ends the turn with its
 * error), a mask's placeholders restored; sent whole to the listeners when the text was held.
 */
async function shownText(
  deps: AskModelDeps,
  text: string,
  hold: boolean,
): Promise<{ text: string } | { error: ReturnType<typeof blockedError> }> {
  const { guard, events } = deps;
  if (!guard || text === "") return { text };
  const checked = await guard.check("output", text);
  if (checked.blocked) return { error: blockedError(checked.blocked) };
  const shown = guard.restore(checked.text);
  if (hold && shown) events?.assistantDelta?.(shown);
  return { text: shown };
}

/** The model call's outcome: its answer (read next), or the step that ends the run (a limit, a failure). */
type Called = NextStep | { type: "model_answered"; response: ChatResponse; route: ServedBy };

async function callModel(
  deps: AskModelDeps,
  turn: TurnState,
  run: Run,
  request: ModelRequest,
  hold: boolean,
): Promise<Called> {
  const { config, events, meter, observer } = deps;
  let reservation = run.reservation;
  delete run.reservation;
  if (!reservation && meter) {
    // Images are counted as the note a route without them gets: their base64 is no measure of their tokens.
    const sent = request.forFormat("native", { images: false });
    const admission = await meter.reserve(
      JSON.stringify(sent.messages).length + JSON.stringify(sent.tools ?? []).length,
      request.route,
    );
    if (!admission.ok) {
      return limitStep(deps, turn, "budget_exceeded", admission.retryAfterSeconds, admission.message);
    }
    reservation = admission.reservation;
  }
  const timer = deadline(config.turnTimeoutMs - workedMs(turn, run, deps.now()), run.signal);
  // Our estimate of what the route last tried was sent, weighed against the prompt tokens its model reports (or
  // counts in a refusal for length); null while no request was sent.
  const sentOn: { last: { route: string; estimate: number } | null } = { last: null };
  const stream = textStream(deps, hold);
  try {
    const { response, route } = await deps.router.complete(request.route, {
      request: async (format, input) => {
        sentOn.last = null;
        const sent = request.forFormat(format, input);
        const servedBy = input.route ?? request.route;
        // Checked against the context of the route tried (a fallback's may be smaller than the mode's route's).
        const estimate = await checkFit(request.fitFor(input), sent, servedBy, input.countTokens, deps.calibration);
        sentOn.last = { route: servedBy, estimate };
        return sent;
      },
      signal: timer.signal,
      ...stream.options,
      ...(events?.assistantRestarted
        ? {
            onRestart: (r) => {
              stream.restart();
              events.assistantRestarted?.(r);
            },
          }
        : {}),
      ...(observer ? { observe: (route, input) => observer.modelCall(route, input) } : {}),
    });
    stream.flush();
    turn.iterations++;
    turn.stepFormat = route.toolFormat;
    reservation?.settle({
      route: route.name,
      usage: response.usage ?? null,
      answerChars: (response.content?.length ?? 0) + response.toolCalls.reduce((sum, c) => sum + c.arguments.length, 0),
    });
    if (response.usage) {
      deps.calibration?.observe(route.name, sentOn.last?.estimate ?? 0, response.usage.promptTokens);
      const before = turn.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
      turn.usage = addUsage(before, response.usage);
    }
    return { type: "model_answered", response, route };
  } catch (error) {
    reservation?.settle(null);
    // A refusal for length that gives the model's count calibrates the route, so the next turn's request fits.
    const counted = refusedPromptTokens(error);
    if (counted !== null && sentOn.last) deps.calibration?.refused(sentOn.last.route, sentOn.last.estimate, counted);
    if (run.signal?.aborted) return { type: "fail", outcome: "cancelled", error: CANCELLED };
    const worked = workedMs(turn, run, deps.now());
    if (worked >= config.turnTimeoutMs) return limitStep(deps, turn, "turn_timeout", worked);
    return modelFailed(deps, turn, error);
  } finally {
    timer.clear();
  }
}

/** What the model said: a malformed JSON call (corrected, or the limit), the answer, or tool calls to run. */
async function readAnswer(
  deps: AskModelDeps,
  turn: TurnState,
  request: ModelRequest,
  response: ChatResponse,
  route: ServedBy,
  hold: boolean,
): Promise<NextStep> {
  const { store } = deps;
  const usedIds = new Set(store.toolCalls(turn.turnId).map((c) => c.id));
  const step = readModelStep(response, turn, route.toolFormat, usedIds);
  if (step.kind === "malformed") return correctMalformed(deps, turn, response, step.problem);
  turn.parseFailures = 0;
  const shown = await shownText(deps, step.text, hold);
  // A blocked answer is not stored: the turn fails, its error naming the guardrail.
  if ("error" in shown) return { type: "fail", outcome: "failed", error: shown.error };
  if (step.kind === "answer") {
    store.appendMessage({ turnId: turn.turnId, role: "assistant", content: shown.text, kind: "answer" });
    return { type: "final_answer", text: shown.text, appendAnswer: false };
  }
  turn.text = shown.text;
  store.appendMessage({
    turnId: turn.turnId,
    role: "assistant",
    // The text beside native calls as the person saw it (checked); a JSON-format call is the response itself.
    content: route.toolFormat === "native" && step.text !== "" ? shown.text : response.content,
    ...(route.toolFormat === "native" ? { toolCalls: step.calls } : {}),
    kind: "message",
  });
  turn.batch = turn.iterations;
  store.saveTurn("running", turn);
  return {
    type: "run_tools",
    calls: step.calls,
    terminate: step.terminate,
    request,
    offered: request.inFormat(route.toolFormat).offered,
  };
}

/** A malformed JSON-format call: logged, sent back with a correction request, and counted toward the limit. */
function correctMalformed(deps: AskModelDeps, turn: TurnState, response: ChatResponse, problem: string): NextStep {
  const { config, store } = deps;
  turn.parseFailures++;
  deps.logger.addCustomEvent("Warning", "[AgentReasoner_MalformedToolCall]", problem, [
    ["SessionId", store.identity().sessionId],
    ["Output", (response.content ?? "").slice(0, MALFORMED_LOG_CHARS)],
  ]);
  store.appendMessage({ turnId: turn.turnId, role: "assistant", content: response.content, kind: "message" });
  store.appendMessage({ turnId: turn.turnId, role: "user", content: correctionRequest(problem), kind: "correction" });
  if (turn.parseFailures >= config.maxParseFailures) {
    return limitStep(deps, turn, "malformed_tool_calls", turn.parseFailures, problem);
  }
  store.saveTurn("running", turn);
  return NEXT_MODEL_CALL;
}

/** A failed model call ends the turn with a fixed text for its cause; what the upstream said goes to the log. */
function modelFailed(deps: AskModelDeps, turn: TurnState, error: unknown): NextStep {
  const pairs: [string, string][] = [
    ["SessionId", deps.store.identity().sessionId],
    ["TurnId", turn.turnId],
  ];
  if (error instanceof ModelError) {
    deps.logger.addCustomEvent("Error", "[AgentReasoner_ModelCall]", error.detail, [
      ...pairs,
      ["Code", error.code],
      ["Status", String(error.status ?? "")],
    ]);
    const wait = error.retryAfterSeconds;
    return {
      type: "fail",
      outcome: "failed",
      error: { code: error.code, message: error.message, ...(wait !== null ? { retryAfterSeconds: wait } : {}) },
    };
  }
  deps.logger.addException("[AgentReasoner_ModelCall__Exception]", error, pairs);
  return {
    type: "fail",
    outcome: "failed",
    error: { code: "model_error", message: "The model call failed unexpectedly." },
  };
}

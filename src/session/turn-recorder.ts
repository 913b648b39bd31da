// The session object's TurnObserver: each step of a run of a turn goes to the turn's timeline (always: the object's
// own record), and, when tracing is on, becomes a span of the GenAI conventions: `invoke_agent {mode}` for the run
// (a child of the request that drives it, whose trace context came with the call), `chat {model}` for each model
// call (failovers and restarts as its events), `execute_tool {tool}` for each tool call, waits as events of the run.
// A span's last attributes and its end are recorded after the reply (endAfterReply), at the time the step ended.
import { type Context, context, type Span, SpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import { ATTR, cacheAttributes, EVENT, OPERATION, providerName } from "../observability/tracing/attributes";
import { bounded, genAiMessages } from "../observability/tracing/content";
import { contextFromCarrier, contextWith, endAfterReply, type Tracing } from "../observability/tracing/tracing";
import type {
  ModelCallEnd,
  ModelCallObservation,
  RouteRef,
  TimelineStep,
  ToolCallObservation,
  ToolCallStart,
  TurnObserver,
  WaitKind,
  WaitObservation,
} from "../observability/turn-observer";
import type { ChatMessage } from "../wire/openai";

/** Where the timeline's steps are written (the session object's TurnSteps). */
export interface TimelineSink {
  add(turnId: string, step: TimelineStep): void;
}

export interface TurnRecorderDeps {
  steps?: TimelineSink | undefined;
  tracing: Tracing | null;
  /** The trace context of the request that drives the run (Caller.trace); absent, the run starts a trace. */
  parent?: Readonly<Record<string, string>> | undefined;
  sessionId: string;
  mode: () => string;
  /** The version of the mode the run read (null until it has read it). */
  modeVersion?: (() => number | null) | undefined;
  /** Takes the Worker's secrets out of captured content (content.ts). */
  redact: (text: string) => string;
  now?: () => number;
}

interface Run {
  how: string;
  startedAt: number;
  span: Span | null;
  context: Context | null;
}

export class TurnRecorder implements TurnObserver {
  private readonly now: () => number;
  private turnId = "";
  private run: Run | null = null;

  constructor(private readonly deps: TurnRecorderDeps) {
    this.now = deps.now ?? Date.now;
  }

  private add(step: TimelineStep): void {
    if (this.turnId) this.deps.steps?.add(this.turnId, step);
  }

  private get capture(): boolean {
    return this.deps.tracing?.settings.captureContent === true;
  }

  /** The span's ids for its timeline step, when the span is sampled (exported); ended or not. */
  private static ids(span: Span | null): Pick<TimelineStep, "traceId" | "spanId"> {
    if (!span) return {};
    const { traceId, spanId, traceFlags } = span.spanContext();
    return (traceFlags & TraceFlags.SAMPLED) === 0 ? {} : { traceId, spanId };
  }

  private child(name: string, kind: SpanKind, attributes: Record<string, string | number | boolean>, at?: number) {
    const { tracing } = this.deps;
    const parent = this.run?.context;
    if (!tracing || !parent) return { span: null, context: null };
    const span = tracing.tracer.startSpan(name, { kind, attributes, ...(at ? { startTime: at } : {}) }, parent);
    return { span, context: contextWith(tracing, span, parent) };
  }

  runStarted(turnId: string, how: "start" | "resume_pause" | "resume_restart"): void {
    this.turnId = turnId;
    const startedAt = this.now();
    const { tracing } = this.deps;
    let span: Span | null = null;
    let runContext: Context | null = null;
    if (tracing) {
      const parent = contextFromCarrier(this.deps.parent);
      const mode = this.deps.mode();
      span = tracing.tracer.startSpan(
        `${OPERATION.invokeAgent} ${mode}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [ATTR.operationName]: OPERATION.invokeAgent,
            [ATTR.agentName]: mode,
            [ATTR.conversationId]: this.deps.sessionId,
            [ATTR.turnId]: turnId,
            [ATTR.turnRun]: how,
          },
        },
        parent,
      );
      runContext = contextWith(tracing, span, parent);
    }
    this.run = { how, startedAt, span, context: runContext };
    if (how === "resume_restart") {
      this.add({
        kind: "restart",
        name: "session restarted",
        startedAt,
        endedAt: startedAt,
        ...TurnRecorder.ids(span),
      });
      span?.addEvent(EVENT.restart, { reason: "session_restarted" });
    }
  }

  runEnded(outcome: string, details: { iterations: number; usage?: ModelCallEnd["usage"] }): void {
    const run = this.run;
    if (!run) return;
    this.run = null;
    const endedAt = this.now();
    const { span } = run;
    const modeVersion = this.deps.modeVersion?.() ?? null;
    if (span) {
      endAfterReply(
        span,
        () => {
          span.setAttributes({ [ATTR.turnOutcome]: outcome, [ATTR.turnIterations]: details.iterations });
          if (modeVersion !== null) span.setAttribute(ATTR.modeVersion, modeVersion);
          if (details.usage) {
            span.setAttributes({
              [ATTR.inputTokens]: details.usage.promptTokens,
              [ATTR.outputTokens]: details.usage.completionTokens,
              ...cacheAttributes(details.usage),
            });
          }
          if (outcome === "failed" || outcome === "broken") {
            span.setAttribute(ATTR.errorType, outcome);
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
        },
        endedAt,
      );
    }
    this.add({
      kind: "run",
      name: run.how,
      startedAt: run.startedAt,
      endedAt,
      outcome,
      iterations: details.iterations,
      ...(modeVersion !== null ? { modeVersion } : {}),
      ...TurnRecorder.ids(span),
    });
  }

  /** Runs `work` with `ctx` active (an upstream request inside carries it); as it is when tracing is off. */
  private static within<T>(ctx: Context | null, work: () => Promise<T>): Promise<T> {
    return ctx ? context.with(ctx, work) : work();
  }

  modelCall(route: RouteRef, input?: () => readonly ChatMessage[]): ModelCallObservation {
    const startedAt = this.now();
    let firstChunkAt: number | null = null;
    const { span, context: callContext } = this.child(
      `${OPERATION.chat} ${route.model}`,
      SpanKind.CLIENT,
      {
        [ATTR.operationName]: OPERATION.chat,
        [ATTR.providerName]: providerName(route.provider),
        [ATTR.requestModel]: route.model,
        [ATTR.modelRoute]: route.name,
        [ATTR.conversationId]: this.deps.sessionId,
      },
      startedAt,
    );
    return {
      within: (work) => TurnRecorder.within(callContext, work),
      firstChunk: () => {
        if (firstChunkAt === null) firstChunkAt = this.now();
      },
      failover: (from, to, reason) => {
        const at = this.now();
        span?.addEvent(EVENT.failover, { from, to, reason }, at);
        this.add({ kind: "failover", name: `${from} → ${to}`, startedAt: at, endedAt: at, error: reason });
      },
      restart: (from, to, discardedChars) => {
        const at = this.now();
        // The answer's first chunk is the one of the stream that starts now: the broken one's text was dropped.
        firstChunkAt = null;
        span?.addEvent(EVENT.restart, { from, to, discarded_chars: discardedChars }, at);
        this.add({ kind: "restart", name: `${from} → ${to}`, startedAt: at, endedAt: at });
      },
      end: (outcome) => {
        const endedAt = this.now();
        const ttftMs = firstChunkAt === null ? null : firstChunkAt - startedAt;
        if (span) {
          // Content is read now (the conversation goes on); the rest after the reply (endAfterReply).
          const messages = this.capture ? input?.() : undefined;
          const inputMessages = messages ? this.content(genAiMessages(messages)) : null;
          const outputMessages = this.capture && outcome.output ? this.content(genAiMessages([outcome.output])) : null;
          endAfterReply(
            span,
            () => {
              span.setAttributes({
                [ATTR.responseModel]: outcome.route.model,
                [ATTR.modelRoute]: outcome.route.name,
                [ATTR.providerName]: providerName(outcome.route.provider),
                [ATTR.requestStream]: true,
              });
              if (ttftMs !== null) span.setAttribute(ATTR.timeToFirstChunk, ttftMs / 1000);
              if (outcome.usage) {
                span.setAttributes({
                  [ATTR.inputTokens]: outcome.usage.promptTokens,
                  [ATTR.outputTokens]: outcome.usage.completionTokens,
                  ...cacheAttributes(outcome.usage),
                });
              }
              if (outcome.finishReason) span.setAttribute(ATTR.finishReasons, [outcome.finishReason]);
              if (outcome.error) {
                span.setAttribute(ATTR.errorType, outcome.error);
                span.setStatus({ code: SpanStatusCode.ERROR });
              }
              if (inputMessages !== null) span.setAttribute(ATTR.inputMessages, inputMessages);
              if (outputMessages !== null) span.setAttribute(ATTR.outputMessages, outputMessages);
            },
            endedAt,
          );
        }
        this.add({
          kind: "model_call",
          name: outcome.route.model,
          startedAt,
          endedAt,
          route: outcome.route.name,
          provider: outcome.route.provider,
          model: outcome.route.model,
          ttftMs,
          ...(outcome.usage
            ? {
                inputTokens: outcome.usage.promptTokens,
                outputTokens: outcome.usage.completionTokens,
                ...(outcome.usage.cachedInputTokens !== undefined
                  ? { cachedInputTokens: outcome.usage.cachedInputTokens }
                  : {}),
                ...(outcome.usage.cacheWriteInputTokens !== undefined
                  ? { cacheWriteInputTokens: outcome.usage.cacheWriteInputTokens }
                  : {}),
              }
            : {}),
          ...(outcome.finishReason ? { finishReason: outcome.finishReason } : {}),
          ...(outcome.error ? { error: outcome.error } : {}),
          ...TurnRecorder.ids(span),
        });
      },
    };
  }

  private content(value: unknown): string {
    return bounded(this.deps.redact(typeof value === "string" ? value : JSON.stringify(value)));
  }

  toolCall(call: ToolCallStart): ToolCallObservation {
    const startedAt = call.startedAt ?? this.now();
    const { span, context: callContext } = this.child(
      `${OPERATION.executeTool} ${call.name}`,
      SpanKind.INTERNAL,
      {
        [ATTR.operationName]: OPERATION.executeTool,
        [ATTR.toolName]: call.name,
        [ATTR.toolCallId]: call.id,
        // The conventions' types: `function` runs in the client, `extension` on the agent's side (ours, MCP).
        [ATTR.toolType]: call.ranOn === "client" ? "function" : "extension",
        [ATTR.toolRanOn]: call.ranOn,
        ...(call.mcpServer ? { [ATTR.mcpServer]: call.mcpServer } : {}),
      },
      startedAt,
    );
    if (span && this.capture && call.arguments !== undefined) {
      span.setAttribute(ATTR.toolCallArguments, this.content(call.arguments));
    }
    return {
      within: (work) => TurnRecorder.within(callContext, work),
      end: (outcome) => {
        const endedAt = this.now();
        if (span) {
          const error = outcome.error ? bounded(this.deps.redact(outcome.error)) : null;
          const result = this.capture && outcome.result ? this.content(outcome.result) : null;
          endAfterReply(
            span,
            () => {
              if (error !== null) {
                span.setAttribute(ATTR.errorType, "tool_error");
                span.setStatus({ code: SpanStatusCode.ERROR, message: error });
              }
              if (result !== null) span.setAttribute(ATTR.toolCallResult, result);
            },
            endedAt,
          );
        }
        this.add({
          kind: "tool_call",
          name: call.name,
          startedAt,
          endedAt,
          toolCallId: call.id,
          ranOn: call.ranOn,
          ...(call.mcpServer ? { mcpServer: call.mcpServer } : {}),
          ...(outcome.error ? { error: bounded(outcome.error) } : {}),
          ...TurnRecorder.ids(span),
        });
      },
    };
  }

  wait(kind: WaitKind, detail: { name: string; toolCallId?: string; startedAt?: number }): WaitObservation {
    const startedAt = detail.startedAt ?? this.now();
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        const endedAt = this.now();
        this.run?.span?.addEvent(
          EVENT.wait,
          {
            kind,
            name: detail.name,
            duration_ms: endedAt - startedAt,
            ...(detail.toolCallId ? { [ATTR.toolCallId]: detail.toolCallId } : {}),
          },
          endedAt,
        );
        this.add({
          kind: "wait",
          name: kind,
          startedAt,
          endedAt,
          ...(detail.toolCallId ? { toolCallId: detail.toolCallId } : {}),
          ...TurnRecorder.ids(this.run?.span ?? null),
        });
      },
    };
  }
}

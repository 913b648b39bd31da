// The metering of one passthrough request (issue 14): admitted against the key's model call limit and the org's
// budget before any upstream call, and ended with a usage row for every upstream call it made.

import { type Attributes, type Context, type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { ApiError } from "../errors";
import type { AppContext } from "../http";
import { COMPLETION_ESTIMATE_TOKENS, estimateOf, type Reservation, WORKER } from "../metering/meter";
import { takeModelCall } from "../metering/model-call-limit";
import {
  type MeterContext,
  type MeteredCall,
  type MeteredCaller,
  recordModelCall,
  reserveModelCall,
  settleModelCall,
  usedBy,
} from "../metering/model-call-meter";
import type { Amount } from "../metering/org-meter";
import type { UsageOutcome } from "../metering/usage-records";
import { ATTR, cacheAttributes, OPERATION, providerName } from "../observability/tracing/attributes";
import { endAfterReply, startChildSpan } from "../observability/tracing/tracing";
import type { ModelRoute } from "../routing/model-routes";
import { settings } from "../settings";
import type { TokenUsage } from "../wire/turn";
import type { PassthroughRequest } from "./request-body";
import type { ChainState, PassthroughRouting } from "./route-chain";

/** The route that answered, and the model it sent upstream (the route's, or the client's own for `default`). */
interface Served {
  route: ModelRoute;
  model: string;
}

function served(route: ModelRoute, routing: PassthroughRouting, request: PassthroughRequest | null): Served {
  // `default` forwards the client's `model` to an OpenAI-compatible upstream; Workers AI runs the route's.
  const clients = !routing.rewritesModel && request && route.provider === "openai_compatible";
  return { route, model: clients ? request.model : route.model };
}

/**
 * One metered request (issue 14): its reservation in the org's meter, taken before the upstream call, and its
 * end: a usage row for every upstream call it made (failed attempts of a failover included) and the reservation
 * settled with what the answer used. Written after the response, off the client's path; never thrown.
 */
export class MeteredRequest {
  private readonly startedAt = Date.now();
  private ended = false;
  /** The request's GenAI span, when tracing is on: ended with the request, once its usage is known. */
  private span: Span | null = null;

  private readonly caller: MeteredCaller;
  /** Work whose events go on the span (a stream's output guardrails): the span ends after it. */
  private readonly holds: Promise<unknown>[] = [];

  constructor(
    private readonly c: AppContext,
    private readonly request: PassthroughRequest,
    private readonly routing: PassthroughRouting,
    private readonly reservation: Reservation,
    private readonly metering: MeterContext,
  ) {
    const { org, keyId, user } = c.get("principal");
    this.caller = { org, keyId, user };
  }

  /** The request admitted (`admit`): its model call taken and its reservation made, or refused. */
  static async admit(c: AppContext, request: PassthroughRequest, routing: PassthroughRouting): Promise<MeteredRequest> {
    // The Worker's requests share their leases and batches.
    const metering = {
      env: c.env,
      logger: c.get("logger"),
      defer: (work: Promise<unknown>) => c.executionCtx.waitUntil(work),
      owner: WORKER,
    };
    return new MeteredRequest(c, request, routing, await admit(c, request, routing, metering), metering);
  }

  /** The tokens the request is reserved for: its body's estimate and what its answer may take. */
  static estimate(request: PassthroughRequest, route: ModelRoute): Amount {
    return estimateOf(request.bytes.byteLength, request.maxTokens ?? COMPLETION_ESTIMATE_TOKENS, route);
  }

  /**
   * Starts the request's span (`chat {model}`, `embeddings {model}`, ...) under the active one, and answers its
   * context, whose `traceparent` the upstream call carries (routes.ts); null when tracing is off.
   */
  traced(path: string): Context | null {
    const operation = operationOf(path);
    const { first } = this.routing;
    const started = startChildSpan(`${operation} ${this.request.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR.operationName]: operation,
        [ATTR.providerName]: providerName(first.provider),
        [ATTR.requestModel]: this.request.model,
        [ATTR.requestStream]: this.request.stream,
        [ATTR.passthroughPath]: path,
        [ATTR.modelRoute]: first.name,
      },
    });
    if (!started) return null;
    this.span = started.span;
    return started.context;
  }

  /** An event on the request's span (a guardrail's decision), when tracing is on. */
  spanEvent(name: string, attributes: Attributes): void {
    this.span?.addEvent(name, attributes);
  }

  /** The span ends only once `work` has settled too (the guardrails that check a stream at its end). */
  holdSpanUntil(work: Promise<unknown>): void {
    this.holds.push(work);
  }

  /** The upstream's status, on the span. */
  upstreamStatus(status: number): void {
    this.span?.setAttribute(ATTR.upstreamStatus, status);
  }

  /**
   * The request ended: `usage` as the upstream reported it, else an estimate from the answer's characters so far
   * (`answerChars`, null when there was no answer).
   */
  end(state: ChainState, outcome: UsageOutcome, usage: TokenUsage | null, answerChars: number | null): void {
    if (this.ended) return;
    this.ended = true;
    this.endSpan(state, outcome, usage);
    this.c.executionCtx.waitUntil(this.write(state, outcome, usage, answerChars));
  }

  private endSpan(state: ChainState, outcome: UsageOutcome, usage: TokenUsage | null): void {
    const { span } = this;
    if (!span) return;
    const { route } = state;
    const failed = [...state.failed];
    // Held (a stream's output guardrails still checking): it ends when they are done, their events inside it.
    const close = () => endAfterReply(span, finish);
    const finish = (endTime: number) => {
      span.setAttributes({
        [ATTR.modelRoute]: route.name,
        [ATTR.providerName]: providerName(route.provider),
        [ATTR.responseModel]: served(route, this.routing, this.request).model,
        "aptix.outcome": outcome,
      });
      if (usage) {
        span.setAttributes({
          [ATTR.inputTokens]: usage.promptTokens,
          [ATTR.outputTokens]: usage.completionTokens,
          ...cacheAttributes(usage),
        });
      }
      for (const from of failed) span.addEvent("aptix.model_route.failover", { from }, endTime);
      if (outcome === "error") {
        span.setAttribute(ATTR.errorType, "upstream_error");
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    };
    if (this.holds.length === 0) close();
    else void Promise.allSettled(this.holds).then(close);
  }

  private async write(
    state: ChainState,
    outcome: UsageOutcome,
    reported: TokenUsage | null,
    answerChars: number | null,
  ): Promise<void> {
    const { c, request } = this;
    const usage = usedBy(reported, request.bytes.byteLength, answerChars);
    const place = { sessionId: null, mode: null, turnId: null, endpoint: c.req.path };
    const record = (call: MeteredCall) =>
      recordModelCall(this.metering, this.caller, place, call, "[passthrough_usage]");
    await Promise.all([
      settleModelCall(this.reservation, usage, state.route).catch((error: unknown) =>
        c.get("logger").addException("[passthrough_usage]", error),
      ),
      // Each attempt the chain moved past, then the one that answered (or failed last), timed from the request's start.
      ...state.attempts.map((attempt) =>
        record({
          route: attempt.route,
          model: served(attempt.route, this.routing, request).model,
          usage: usedBy(attempt.usage, 0, attempt.answerChars),
          latencyMs: attempt.latencyMs,
          outcome: attempt.outcome,
        }),
      ),
      record({
        route: state.route,
        model: served(state.route, this.routing, request).model,
        usage,
        latencyMs: Date.now() - this.startedAt,
        outcome,
      }),
    ]);
  }
}

/** The GenAI operation a passthrough path is. */
function operationOf(path: string): string {
  if (path === "/embeddings") return OPERATION.embeddings;
  if (path === "/completions") return OPERATION.textCompletion;
  return OPERATION.chat;
}

/**
 * The request's model calls may start: one of the key's calls per minute (MODEL_CALL_LIMITER) and a reservation
 * in its org's meter, asked for at once. A refusal of either refuses the request (and gives back the other).
 */
async function admit(
  c: AppContext,
  request: PassthroughRequest,
  routing: PassthroughRouting,
  metering: MeterContext,
): Promise<Reservation> {
  const { org, keyId, user } = c.get("principal");
  const [grant, reserved] = await Promise.all([
    takeModelCall(c.env.MODEL_CALL_LIMITER, keyId, c.get("logger")),
    reserveModelCall(
      metering,
      { org, keyId, user },
      MeteredRequest.estimate(request, routing.first),
      settings(c.env).metering.leaseCalls,
    ),
  ]);
  if (!grant.ok) {
    if (reserved.ok) void reserved.reservation.settle(null);
    throw new ApiError("rate_limit_exceeded", grant.message, {
      headers: { "retry-after": String(grant.retryAfterSeconds) },
    });
  }
  if (!reserved.ok) throw ApiError.from(reserved.refusal);
  return reserved.reservation;
}

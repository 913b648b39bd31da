// The agent loop's way to a model: a call names a route; the router walks the route's chain (the route, then its
// fallbacks), asks each for the request in its own tool format, and answers with the first route that answers.
// Before a first byte, a route that is unreachable, times out, is rate limited, fails (5xx, a broken answer), has
// its key refused or names a model its service does not have hands the call to the next one. After a first byte (streamed text already shown), the step is started again
// from scratch on the next route once, and the caller is told to drop what was shown.

import { type ChatModel, type ChatResponse, ModelError } from "../llm/chat-model";
import type { AdminLogger } from "../observability/admin-logger";
import type { ModelCallObservation, RouteRef } from "../observability/turn-observer";
import type { ChatMessage, ChatTool } from "../wire/openai";
import type { BreakerOptions, CircuitBreaker } from "./circuit-breaker";
import { acceptsImages, type ModelRoute } from "./model-routes";
import { type RouteAttempt, type RouteFailure, walkChain } from "./route-chain-walker";
import type { RouteTable } from "./route-table";

export type ToolFormat = ModelRoute["toolFormat"];

/** A model request in one tool format: its messages, and the tools when the format is native. */
export interface FormattedRequest {
  messages: ChatMessage[];
  tools?: ChatTool[];
  /** The most the answer may take (`max_tokens`): the reserve kept for it in the route's context. */
  maxTokens?: number;
  /** false: nothing is marked for the provider's prompt cache (a request that will not recur, such as a compaction). */
  promptCache?: false;
}

/** What a route reads, beside its tool format: images or not (an image goes to a route without them as a note). */
export interface RouteInput {
  images: boolean;
  /** The route's name, for what is kept per route (the token estimate's calibration). */
  route?: string;
  /** The route's declared context (its model's tokens; null: none): the request is sized and checked against it. */
  contextTokens?: number | null;
  /** Counts a request's input tokens with the route's model, when its provider counts them (null: it could not). */
  countTokens?: (request: FormattedRequest) => Promise<number | null>;
}

export interface RoutedCall {
  /** The request for a route's tool format and input (the prompt and history differ between the formats). */
  request(format: ToolFormat, input: RouteInput): Promise<FormattedRequest>;
  signal?: AbortSignal;
  /** Streamed text, as the serving route produces it. */
  onTextDelta?: (text: string) => void;
  /** The text streamed so far is void: the step starts again on another route. */
  onRestart?: (restart: StepRestart) => void;
  /** Watches the call (the turn's timeline and trace): told the first route, each failover, the end. */
  observe?: (route: RouteRef, input: () => readonly ChatMessage[]) => ModelCallObservation;
}

export interface StepRestart {
  /** The route whose stream failed after its first byte. */
  failedRoute: string;
  /** The route the step starts again on. */
  route: string;
  /** How many characters of streamed text the failed route had sent: the text to drop. */
  discardedChars: number;
}

/** The route that answered: its name, provider, upstream model and tool format. */
export type ServedBy = Pick<ModelRoute, "name" | "provider" | "model" | "toolFormat">;

export interface RoutedResponse {
  response: ChatResponse;
  route: ServedBy;
}

export interface ModelRouter {
  complete(route: string, call: RoutedCall): Promise<RoutedResponse>;
  /** The context length the route `route` names declares (its chain's first route); null or absent: none declared. */
  contextTokens?(route: string): Promise<number | null>;
  /** The route `route` names (its chain's first route) reads images. */
  acceptsImages?(route: string): Promise<boolean>;
}

/**
 * The failures that are the route's, not the request's (docs/errors.md): the route is down, slow, busy or broken,
 * its key is refused or its model is not the service's. These hand the call to the next route and count against the
 * route's circuit. The request's own failures (context too long, a bad request, content filtered) would fail on
 * every route alike: they end the call at once and leave the circuit alone.
 */
const FAILS_OVER: ReadonlySet<ModelError["code"]> = new Set([
  "model_unavailable",
  "model_rate_limited",
  "model_timeout",
  "model_bad_response",
  "model_auth_failed",
  "model_not_found",
]);

export interface ChainRouterDeps {
  routes: () => Promise<RouteTable>;
  /** Hears every upstream call, whatever its end. */
  onAttempt?: (attempt: RouteAttempt) => void;
  /** The model behind a route (its provider, upstream model, key and timeout), its key from the table it is in. */
  modelFor: (route: ModelRoute, table: RouteTable) => ChatModel;
  breaker: CircuitBreaker;
  breakerOptions: BreakerOptions;
  logger: AdminLogger;
}

export class ChainRouter implements ModelRouter {
  constructor(private readonly deps: ChainRouterDeps) {}

  async contextTokens(name: string): Promise<number | null> {
    return (await this.deps.routes()).chain(name)[0]?.contextTokens ?? null;
  }

  async acceptsImages(name: string): Promise<boolean> {
    const first = (await this.deps.routes()).chain(name)[0];
    return first ? acceptsImages(first) : false;
  }

  async complete(name: string, call: RoutedCall): Promise<RoutedResponse> {
    const { breaker, breakerOptions, logger, onAttempt } = this.deps;
    const table = await this.deps.routes();
    let restarted = false;
    let sent: FormattedRequest | null = null;
    // Watched from the first request sent: a request refused before any call (too long for the route's context)
    // is no model call, on the timeline or in the meter.
    let watch: ModelCallObservation | undefined;
    const walk = {
      breaker,
      breakerOptions,
      logger,
      ...(onAttempt ? { onAttempt } : {}),
      onFailover: (from: ModelRoute, to: ModelRoute, failure: RouteFailure) => {
        if (failure.answerChars > 0) {
          restarted = true;
          watch?.restart(from.name, to.name, failure.answerChars);
          call.onRestart?.({ failedRoute: from.name, route: to.name, discardedChars: failure.answerChars });
        } else {
          watch?.failover(from.name, to.name, failure.code);
        }
      },
    };
    const answered = await walkChain<{ route: ModelRoute; response: ChatResponse; latencyMs: number }>(
      table.chain(name),
      walk,
      async (route, next) => {
        let streamed = 0;
        let startedAt = Date.now();
        let asked = false;
        let request: FormattedRequest | null = null;
        try {
          const model = this.deps.modelFor(route, table);
          const counter = model.countTokens?.bind(model);
          // Made (and checked) for this route: its tool format, whether it reads images, its own context.
          asked = true;
          request = await call.request(route.toolFormat, {
            images: acceptsImages(route),
            route: route.name,
            contextTokens: route.contextTokens ?? null,
            ...(counter
              ? {
                  countTokens: (r: FormattedRequest) =>
                    counter({ ...r, ...(call.signal ? { signal: call.signal } : {}) }),
                }
              : {}),
          });
          sent = request;
          startedAt = Date.now();
          watch ??= call.observe?.(route, () => sent?.messages ?? []);
          const sending = request;
          const ask = () =>
            model.complete({
              ...sending,
              ...(watch ? { onFirstChunk: () => watch?.firstChunk() } : {}),
              ...(call.signal ? { signal: call.signal } : {}),
              // With a route to hand over to, a failing one is not retried in place.
              ...(next ? { maxRetries: 0 } : {}),
              ...(call.onTextDelta
                ? {
                    onTextDelta: (text: string) => {
                      streamed += text.length;
                      call.onTextDelta?.(text);
                    },
                  }
                : {}),
            });
          const response = watch ? await watch.within(ask) : await ask();
          return { answered: { route, response, latencyMs: Date.now() - startedAt } };
        } catch (thrown) {
          // The failure's text names this route and its model where the cause is the route's configuration.
          const error = thrown instanceof ModelError ? thrown.onRoute(route) : thrown;
          // Refused before the call (too long for this route's context): no upstream call to record or fail over.
          if (asked && request === null) throw error;
          const latencyMs = Date.now() - startedAt;
          const code = call.signal?.aborted ? "cancelled" : error instanceof ModelError ? error.code : "model_error";
          // The attempt that ends the walk is this caller's to report; one the walk moves past, the walk's.
          const endsHere = () => {
            onAttempt?.({
              route,
              latencyMs,
              outcome: streamed > 0 ? "partial" : "error",
              usage: null,
              answerChars: streamed,
            });
            watch?.end({ route, error: code });
            throw error;
          };
          if (call.signal?.aborted || !(error instanceof ModelError) || !FAILS_OVER.has(error.code)) return endsHere();
          return {
            // After a first byte, one fresh start on another route; a second broken stream ends the step.
            failed: {
              code: error.code,
              detail: error.detail,
              latencyMs,
              answerChars: streamed,
              final: streamed > 0 && restarted,
            },
            giveUp: endsHere,
          };
        }
      },
    );
    // After the walk: what hears the answer (the meter's row, the turn's observer) failing is not the route's failure.
    const { route, response } = answered;
    onAttempt?.({
      route,
      latencyMs: answered.latencyMs,
      outcome: "ok",
      usage: response.usage ?? null,
      answerChars: (response.content?.length ?? 0) + response.toolCalls.reduce((sum, c) => sum + c.arguments.length, 0),
    });
    watch?.end({
      route,
      usage: response.usage ?? null,
      finishReason: response.finishReason,
      output: {
        role: "assistant",
        content: response.content,
        ...(response.toolCalls.length > 0
          ? {
              tool_calls: response.toolCalls.map((c) => ({
                id: c.id,
                type: "function" as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      },
    });
    return { response, route: servedBy(route) };
  }
}

export function servedBy(route: ModelRoute): ServedBy {
  return { name: route.name, provider: route.provider, model: route.model, toolFormat: route.toolFormat };
}

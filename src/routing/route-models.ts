// What stands behind a route: the model the loop calls (a ChatModel) and the upstream the passthrough forwards to
// (a fetch). One place per provider: an OpenAI-compatible upstream with the key its secret holds, an Anthropic
// Messages API upstream (the passthrough relays to it or translates for it), the Workers AI binding (its events for
// the loop, its OpenAI face for the passthrough), or the offline demo model.

import { AnthropicChatModel } from "../llm/anthropic-chat-model";
import type { ChatModel } from "../llm/chat-model";
import { ModelError } from "../llm/chat-model";
import { DemoChatModel } from "../llm/demo-model";
import { demoOpenAIFetch } from "../llm/demo-openai-upstream";
import { OpenAIChatModel } from "../llm/openai-chat-model";
import { aiBinding } from "../llm/workers-ai";
import { WorkersAiChatModel } from "../llm/workers-ai-chat-model";
import { workersAiFetch } from "../llm/workers-ai-openai-face";
import { tracedFetch } from "../observability/tracing/tracing";
import { secretRedactor } from "../secret-redaction";
import type { ModelRoute } from "./model-routes";
import type { RouteKeys } from "./route-table";

/** An upstream's face: `path` is what follows /v1 (`/chat/completions`, `/models`, `/messages`). */
export type UpstreamFetch = (path: string, init: RequestInit) => Promise<Response>;

/** Why a route cannot be used as configured (a secret or binding it needs is missing), or null. */
export function routeProblem(route: ModelRoute, env: object, keys: RouteKeys): string | null {
  if ((route.provider === "openai_compatible" || route.provider === "anthropic") && keys.keyOf(route) === null) {
    return route.org === null
      ? `the secret ${route.apiKeySecret} that model route '${route.name}' needs is not set`
      : `the secret ${route.apiKeySecret} that model route '${route.name}' needs is not stored in its organization (PUT /admin/secrets/${route.apiKeySecret})`;
  }
  if (route.provider === "workers_ai" && !aiBinding(env)) {
    return `model route '${route.name}' needs the AI binding ([ai] binding = "AI" in wrangler.toml)`;
  }
  return null;
}

/**
 * The upstream of a route for the passthrough; throws a ModelError when it is unusable. Plain fetch: the
 * passthrough puts its span's `traceparent` in the headers it builds (route-chain.ts).
 */
export function routeFetch(route: ModelRoute, env: object, keys: RouteKeys): UpstreamFetch {
  const problem = routeProblem(route, env, keys);
  if (problem) throw new ModelError("model_unavailable", problem);
  // A Messages API upstream's base URL is Anthropic's (no /v1): its paths are /v1/messages and /v1/messages/count_tokens.
  // The passthrough sends it bodies in its own wire (src/passthrough/wire-crossing.ts).
  if (route.provider === "anthropic") {
    const base = route.baseUrl ?? "";
    return (path, init) => fetch(`${base}/v1${path}`, init);
  }
  const ai = aiBinding(env);
  if (route.provider === "workers_ai" && ai) return workersAiFetch(ai, route.model);
  if (route.provider === "offline_demo" || !route.baseUrl) return demoOpenAIFetch;
  const base = route.baseUrl;
  return (path, init) => fetch(`${base}${path}`, init);
}

/** What a route's model is told of the calls' caller. */
export interface CallerScope {
  /** The key that groups one session's calls in a provider's prompt cache (`prompt_cache_key`, where the route sends it). */
  promptCacheKey?: string | undefined;
}

/** The model behind a route for the agent loop; one whose secret or binding is missing fails every call. */
export function routeChatModel(
  route: ModelRoute,
  env: object,
  defaultTimeoutMs: number,
  keys: RouteKeys,
  scope: CallerScope = {},
): ChatModel {
  if (route.provider === "offline_demo") return new DemoChatModel();
  const callTimeoutMs = route.timeoutMs ?? defaultTimeoutMs;
  const problem = routeProblem(route, env, keys);
  if (problem) return unusable(route, problem);
  const ai = aiBinding(env);
  if (route.provider === "workers_ai" && ai) {
    return new WorkersAiChatModel({ ai, model: route.model, callTimeoutMs });
  }
  if (route.provider === "anthropic") {
    return new AnthropicChatModel({
      baseUrl: route.baseUrl ?? "",
      apiKey: keys.keyOf(route) ?? "",
      model: route.model,
      ...(route.anthropicVersion ? { anthropicVersion: route.anthropicVersion } : {}),
      promptCache: route.promptCaching ? { ttl: route.promptCacheTtl ?? "5m" } : null,
      callTimeoutMs,
      fetch: tracedFetch,
      redact: secretRedactor(env, [keys.keyOf(route) ?? ""]),
    });
  }
  return new OpenAIChatModel({
    baseUrl: route.baseUrl ?? "",
    apiKey: keys.keyOf(route) ?? "",
    model: route.model,
    callTimeoutMs,
    ...(route.maxTokensField ? { maxTokensField: route.maxTokensField } : {}),
    ...(route.promptCacheKey && scope.promptCacheKey ? { promptCacheKey: scope.promptCacheKey } : {}),
    // The model call's trace context goes along, so the call shows in the provider's trace too.
    fetch: tracedFetch,
    redact: secretRedactor(env, [keys.keyOf(route) ?? ""]),
  });
}

function unusable(route: ModelRoute, problem: string): ChatModel {
  return {
    name: route.model,
    complete: () => Promise.reject(new ModelError("model_unavailable", problem)),
  };
}

// Model routes: which provider and model serve a model call, and the routes to try when it fails (issue 13).
// Kept in D1 (`model_routes`), managed by /admin/model-routes; `default` is not stored but made from the LLM_*
// vars, so existing set-ups keep working unchanged. A route names the secret holding its key, never the key: a
// Worker secret for the deployment's routes, one of the org's own secrets (src/tenancy/org-secrets.ts) for an org's.
// A route is the deployment's (every org may use it) or one org's (only its people may; issue 40).

import { z } from "zod";
import { KEY_NAME_PATTERN } from "../key-name";
import { DEMO_MODEL_ID } from "../llm/demo-openai-upstream";
import { aiBinding } from "../llm/workers-ai";
import { SecretName } from "../secret-name";
import type { Settings } from "../settings";

export const DEFAULT_ROUTE = "default";
export const MODEL_PROVIDERS = ["openai_compatible", "workers_ai", "anthropic"] as const;
/** How many routes a chain may try after the first. */
export const MAX_FALLBACKS = 5;
export const MAX_ROUTE_TIMEOUT_MS = 600_000;
/** The smallest and largest context length a route may declare (estimated tokens). */
export const MIN_CONTEXT_TOKENS = 512;
export const MAX_CONTEXT_TOKENS = 10_000_000;
/** What a route's model reads: text always; images too when the route says so. */
export const INPUT_MODALITIES = ["text", "image"] as const;
export type InputModality = (typeof INPUT_MODALITIES)[number];
const TEXT_ONLY: InputModality[] = ["text"];
/** How long Anthropic keeps a cached prefix: 5 minutes (its default) or 1 hour (dearer to write). */
export const PROMPT_CACHE_TTLS = ["5m", "1h"] as const;
export type PromptCacheTtl = (typeof PROMPT_CACHE_TTLS)[number];
/**
 * The field an `openai_compatible` route names the answer's limit with: OpenAI's reasoning models (o-series, gpt-5)
 * refuse `max_tokens` and take only `max_completion_tokens` (which every OpenAI chat model takes); many other
 * OpenAI-compatible servers take only `max_tokens`.
 */
export const MAX_TOKENS_FIELDS = ["max_tokens", "max_completion_tokens"] as const;
export type MaxTokensField = (typeof MAX_TOKENS_FIELDS)[number];

/** The field a route sends unless it says otherwise: `max_completion_tokens` to api.openai.com, else `max_tokens`. */
export function defaultMaxTokensField(baseUrl: string): MaxTokensField {
  try {
    return new URL(baseUrl).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens";
  } catch {
    return "max_tokens";
  }
}

/** A route's name follows the mode keys' rule (a mode names its route; the passthrough's `model` may too). */
export const ROUTE_NAME_PATTERN = KEY_NAME_PATTERN;
const RouteName = z
  .string()
  .regex(ROUTE_NAME_PATTERN, "use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter");

/** The body of PUT /admin/model-routes/:name. */
export const ModelRouteBody = z
  .strictObject({
    provider: z.enum(MODEL_PROVIDERS),
    model: z.string().trim().min(1, "must not be empty").max(200),
    baseUrl: z
      .string()
      .trim()
      .regex(
        /^https?:\/\/[^\s]+$/,
        "must be an http(s) URL: the upstream's OpenAI base URL ending in /v1, or for anthropic the URL Anthropic's SDKs take",
      )
      .transform((v) => v.replace(/\/+$/, ""))
      .optional(),
    apiKeySecret: SecretName.optional(),
    toolFormat: z.enum(["native", "json"], { error: "must be 'native' or 'json'" }).default("native"),
    timeoutMs: z.number().int().min(1).max(MAX_ROUTE_TIMEOUT_MS).optional(),
    fallbacks: z.array(RouteName).max(MAX_FALLBACKS).default([]),
    /** US dollars per million prompt (input) and completion (output) tokens: cost figures and cost limits. */
    inputPricePerMTok: z.number().min(0).max(10_000).nullable().default(null),
    outputPricePerMTok: z.number().min(0).max(10_000).nullable().default(null),
    /** US dollars per million input tokens read from the provider's prompt cache; null: the input price. */
    cachedInputPricePerMTok: z.number().min(0).max(10_000).nullable().default(null),
    /** US dollars per million input tokens written to the provider's prompt cache; null: the input price. */
    cacheWritePricePerMTok: z.number().min(0).max(10_000).nullable().default(null),
    /**
     * The agent's requests on an `anthropic` route mark `cache_control` breakpoints (tools, system, conversation)
     * so each step reads the prefix from Anthropic's cache (default true; false sends none).
     */
    promptCaching: z.boolean().default(true),
    /** How long an `anthropic` route's cached prefixes live: `5m` (default) or `1h` (Anthropic's extended TTL). */
    promptCacheTtl: z.enum(PROMPT_CACHE_TTLS, { error: "must be '5m' or '1h'" }).optional(),
    /**
     * An `openai_compatible` route sends `prompt_cache_key` (one per session) with the agent's requests, which
     * OpenAI uses to route a session's requests to the same cache (default false: not every server takes it).
     */
    promptCacheKey: z.boolean().default(false),
    /**
     * The field an `openai_compatible` route sends the answer's limit in: `max_tokens` or `max_completion_tokens`
     * (default: `max_completion_tokens` when the base URL's host is api.openai.com, else `max_tokens`).
     */
    maxTokensField: z.enum(MAX_TOKENS_FIELDS, { error: "must be 'max_tokens' or 'max_completion_tokens'" }).optional(),
    /** The model's context length in (estimated) tokens: the loop's history and prompt budgets are cut to fit it. */
    contextTokens: z.number().int().min(MIN_CONTEXT_TOKENS).max(MAX_CONTEXT_TOKENS).nullable().default(null),
    /** What the model reads: `["text"]` (default), or `["text", "image"]` for a model that reads images too. */
    inputModalities: z
      .array(z.enum(INPUT_MODALITIES, { error: "must be 'text' or 'image'" }))
      .min(1, "must name at least 'text'")
      .refine((list) => list.includes("text"), "must include 'text' (every route reads text)")
      .refine((list) => new Set(list).size === list.length, "names a modality twice")
      .default(TEXT_ONLY),
    /** The anthropic-version header an `anthropic` route sends (default 2023-06-01); only for that provider. */
    anthropicVersion: z
      .string()
      .trim()
      .regex(/^\d{4}-\d{2}-\d{2}$/, "must be an anthropic-version date such as 2023-06-01")
      .optional(),
  })
  .superRefine((route, ctx) => {
    if (route.provider === "openai_compatible" && !route.baseUrl) {
      ctx.addIssue({ code: "custom", path: ["baseUrl"], message: "is required for the openai_compatible provider" });
    }
    if (route.provider === "anthropic") {
      if (!route.baseUrl) {
        ctx.addIssue({
          code: "custom",
          path: ["baseUrl"],
          message: "is required for the anthropic provider (for example https://api.anthropic.com)",
        });
      }
      if (!route.apiKeySecret) {
        ctx.addIssue({
          code: "custom",
          path: ["apiKeySecret"],
          message: "is required for the anthropic provider (the secret holding its x-api-key)",
        });
      }
      if (route.toolFormat !== "native") {
        ctx.addIssue({
          code: "custom",
          path: ["toolFormat"],
          message: "must be 'native' for the anthropic provider (the Messages API takes tools natively)",
        });
      }
    } else {
      if (route.anthropicVersion !== undefined) {
        ctx.addIssue({ code: "custom", path: ["anthropicVersion"], message: "is only for the anthropic provider" });
      }
      if (route.promptCacheTtl !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["promptCacheTtl"],
          message: "is only for the anthropic provider (OpenAI-compatible caches are kept by the provider)",
        });
      }
    }
    if (route.maxTokensField !== undefined && route.provider !== "openai_compatible") {
      ctx.addIssue({
        code: "custom",
        path: ["maxTokensField"],
        message:
          route.provider === "anthropic"
            ? "is only for the openai_compatible provider (the Messages API takes max_tokens)"
            : "is only for the openai_compatible provider",
      });
    }
    if (route.promptCacheKey && route.provider !== "openai_compatible") {
      ctx.addIssue({ code: "custom", path: ["promptCacheKey"], message: "is only for the openai_compatible provider" });
    }
    if (route.provider === "workers_ai" && route.inputModalities.includes("image")) {
      ctx.addIssue({
        code: "custom",
        path: ["inputModalities"],
        message: "cannot include 'image' for workers_ai (the binding is sent text only)",
      });
    }
    if (route.provider === "workers_ai" && (route.baseUrl || route.apiKeySecret)) {
      const field = route.baseUrl ? "baseUrl" : "apiKeySecret";
      ctx.addIssue({ code: "custom", path: [field], message: "is not used by workers_ai (the AI binding needs none)" });
    }
    const seen = new Set<string>();
    route.fallbacks.forEach((name, i) => {
      if (seen.has(name)) ctx.addIssue({ code: "custom", path: ["fallbacks", i], message: "is named twice" });
      seen.add(name);
    });
  });
export type ModelRouteBody = z.output<typeof ModelRouteBody>;

export const ModelRoute = z.object({
  name: z.string(),
  /** `offline_demo` only for `default` without LLM_BASE_URL (what `npm start` runs). */
  provider: z.enum([...MODEL_PROVIDERS, "offline_demo"]),
  model: z.string(),
  baseUrl: z.string().nullable(),
  apiKeySecret: z.string().nullable(),
  toolFormat: z.enum(["native", "json"]),
  timeoutMs: z.number().int().nullable(),
  fallbacks: z.array(z.string()),
  inputPricePerMTok: z.number().nullable(),
  outputPricePerMTok: z.number().nullable(),
  /** Per million input tokens read from the prompt cache; null: the input price. */
  cachedInputPricePerMTok: z.number().nullable(),
  /** Per million input tokens written to the prompt cache; null: the input price. */
  cacheWritePricePerMTok: z.number().nullable(),
  /** An `anthropic` route marks cache_control breakpoints; an `openai_compatible` one keeps it for its meaning only. */
  promptCaching: z.boolean(),
  /** The lifetime of an `anthropic` route's cache entries (`5m` or `1h`); null for the other providers. */
  promptCacheTtl: z.enum(PROMPT_CACHE_TTLS).nullable(),
  /** An `openai_compatible` route sends `prompt_cache_key` per session. */
  promptCacheKey: z.boolean(),
  /** The field an `openai_compatible` route sends the answer's limit in; null for the other providers. */
  maxTokensField: z.enum(MAX_TOKENS_FIELDS).nullable(),
  /** The model's context length (estimated tokens); null: the loop uses the global budgets. */
  contextTokens: z.number().int().nullable(),
  /** What the model reads: `text`, and `image` when it reads images (a user's attached images go to it). */
  inputModalities: z.array(z.enum(INPUT_MODALITIES)),
  /** The anthropic-version header an `anthropic` route sends; null for the other providers. */
  anthropicVersion: z.string().nullable(),
  /** `vars` for `default` (made from the LLM_* vars), `stored` for the routes in D1. */
  source: z.enum(["vars", "stored"]),
  /** The org whose route it is (only its people use it), or null: the deployment's, which every org may use. */
  org: z.string().nullable(),
  createdAt: z.string().nullable(),
  updatedAt: z.string().nullable(),
});
export type ModelRoute = z.infer<typeof ModelRoute>;

/** What `default` is made from: the LLM_* vars, and the Workers AI model when the Worker has the AI binding. */
export interface DefaultRouteSource {
  llm: Settings["llm"];
  /** The model `default` runs on Workers AI when LLM_BASE_URL is empty; null without the binding (locally). */
  workersAiModel: string | null;
}

/** The source of `default` for this Worker: its settings, and whether it has an AI binding to use. */
export function defaultRouteSource(env: object, config: Settings): DefaultRouteSource {
  const hasAi = aiBinding(env) !== null;
  return { llm: config.llm, workersAiModel: hasAi && config.llm.workersAiModel ? config.llm.workersAiModel : null };
}

/**
 * `default`, as the LLM_* vars make it: the configured upstream; without one, Workers AI on a deployment (the
 * AI binding, no third-party key) or the offline demo model where there is no binding (`npm start`, tests).
 */
export function defaultRoute({ llm, workersAiModel }: DefaultRouteSource): ModelRoute {
  const provider = llm.baseUrl ? "openai_compatible" : workersAiModel ? "workers_ai" : "offline_demo";
  return {
    name: DEFAULT_ROUTE,
    provider,
    model:
      provider === "workers_ai" && workersAiModel
        ? workersAiModel
        : provider === "offline_demo"
          ? DEMO_MODEL_ID
          : llm.model,
    baseUrl: llm.baseUrl || null,
    apiKeySecret: llm.baseUrl && llm.apiKey ? "LLM_API_KEY" : null,
    // Workers AI's function-calling models take OpenAI's tools.
    toolFormat: provider === "workers_ai" ? "native" : llm.toolFormat,
    timeoutMs: llm.callTimeoutMs,
    fallbacks: [],
    inputPricePerMTok: null,
    outputPricePerMTok: null,
    cachedInputPricePerMTok: null,
    cacheWritePricePerMTok: null,
    promptCaching: true,
    promptCacheTtl: null,
    promptCacheKey: false,
    maxTokensField:
      provider === "openai_compatible" ? (llm.maxTokensField ?? defaultMaxTokensField(llm.baseUrl)) : null,
    contextTokens: null,
    inputModalities: TEXT_ONLY,
    anthropicVersion: null,
    source: "vars",
    org: null,
    createdAt: null,
    updatedAt: null,
  };
}

/** The route's model reads images (a user's attached images are sent to it). */
export const acceptsImages = (route: Pick<ModelRoute, "inputModalities">): boolean =>
  route.inputModalities.includes("image");

/**
 * Why `name` with these fallbacks cannot be stored among `routes` (a name no route has, or a chain that comes
 * back to a route it already tried), with the index of the fallback at fault; null when it can.
 */
export function fallbackProblem(
  name: string,
  fallbacks: readonly string[],
  routes: ReadonlyMap<string, readonly string[]>,
): { index: number; message: string } | null {
  const graph = new Map(routes);
  graph.set(name, fallbacks);
  for (const [index, fallback] of fallbacks.entries()) {
    if (fallback === name) return { index, message: "is the route itself" };
    if (!graph.has(fallback)) {
      const known = [...graph.keys()].filter((n) => n !== name).join(", ");
      return { index, message: `names no route (the routes are: ${known})` };
    }
  }
  // A cycle through `name`: a depth-first walk from its fallbacks that reaches it again.
  const walk = (from: string, path: string[]): string[] | null => {
    for (const next of graph.get(from) ?? []) {
      if (next === name) return [...path, next];
      if (path.includes(next)) continue;
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return null;
  };
  for (const [index, fallback] of fallbacks.entries()) {
    const cycle = walk(fallback, [name, fallback]);
    if (cycle) return { index, message: `makes a cycle: ${cycle.join(" -> ")}` };
  }
  return null;
}

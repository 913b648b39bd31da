// A route's live check (GET /admin/health, `npm run doctor`; issue 41): does its upstream answer, is the key accepted,
// does the model exist, are tools accepted when the route sends them natively; each failure in the upstream's own
// words (status, code, message), after redaction. The upstream is asked for its models first (upstream-models.ts);
// one tiny request (one tool when the tool format is native, at most a token or so of answer) settles what the list
// could not. The offline demo model and Workers AI (the binding) are checked in their own way.
import { z } from "zod";
import { classifyUpstreamError, upstreamWords } from "../llm/upstream-error";
import { aiBinding } from "../llm/workers-ai";
import type { ModelRoute } from "./model-routes";
import {
  type HttpRoute,
  isHttpRoute,
  listUpstreamModels,
  noAnswerWords,
  shownUpstreamWords,
  shownUrl,
  someModels,
  UPSTREAM_CHECK_TIMEOUT_MS,
  upstreamHeaders,
  upstreamUrl,
} from "./upstream-models";

/** `request`: a request as the loop sends it (its answer limit in the route's maxTokensField) is accepted. */
export const HEALTH_CHECK_NAMES = ["reachable", "key", "model", "tools", "request"] as const;
export type HealthCheckName = (typeof HEALTH_CHECK_NAMES)[number];

export const HealthCheck = z.object({
  name: z.enum(HEALTH_CHECK_NAMES),
  ok: z.boolean(),
  /** The upstream's HTTP status for what the check read, or null (no answer, or no HTTP: Workers AI, the demo). */
  status: z.number().int().nullable(),
  /** What was found; for a failure, the upstream's own words after redaction. */
  message: z.string(),
});
export type HealthCheck = z.infer<typeof HealthCheck>;

export const RouteHealth = z.object({
  route: z.string(),
  provider: z.string(),
  model: z.string(),
  /** Every check passed. */
  ok: z.boolean(),
  checks: z.array(HealthCheck),
});
export type RouteHealth = z.infer<typeof RouteHealth>;

export interface RouteHealthOptions {
  /** The Worker's env (the AI binding). */
  env: object;
  /** The key the route sends; null when the secret it names is not there. */
  key: string | null;
  /** Takes every secret out of an upstream's words. */
  redact: (text: string) => string;
  timeoutMs?: number;
}

/** The one tool of the tools check: it does nothing, and the model is not asked to call it. */
const PROBE_TOOL = {
  name: "aptix_health_check",
  description: "Does nothing; aptix's health check sends it to see that tools are accepted.",
  schema: { type: "object", properties: {} },
};
const PROBE_PROMPT = "Reply with the word ok.";
/** The answer limit an OpenAI-compatible probe sends: small, so a real probe stays cheap (a reasoning model needs some). */
const PROBE_MAX_TOKENS = 16;

const check = (name: HealthCheckName, ok: boolean, status: number | null, message: string): HealthCheck => ({
  name,
  ok,
  status,
  message,
});

/** Checks one route against its upstream. */
export async function checkRoute(route: ModelRoute, options: RouteHealthOptions): Promise<RouteHealth> {
  const checks =
    route.provider === "offline_demo"
      ? [check("model", true, null, "the offline demo model (no LLM_BASE_URL): it answers offline, and says so")]
      : route.provider === "workers_ai"
        ? await workersAiChecks(route, options)
        : isHttpRoute(route)
          ? await httpChecks(route, options)
          : [check("reachable", false, null, "the route names no base URL")];
  return {
    route: route.name,
    provider: route.provider,
    model: route.model,
    ok: checks.every((c) => c.ok),
    checks,
  };
}

async function httpChecks(route: HttpRoute, options: RouteHealthOptions): Promise<HealthCheck[]> {
  const { key, redact } = options;
  const timeoutMs = options.timeoutMs ?? UPSTREAM_CHECK_TIMEOUT_MS;
  if (key === null) {
    return [check("key", false, null, `the secret ${route.apiKeySecret} the route names is not set`)];
  }
  const listing = await listUpstreamModels(route, key, { timeoutMs, redact });
  const checks: HealthCheck[] = [];
  switch (listing.kind) {
    case "unreachable":
      return [check("reachable", false, null, `${shownUrl(route, "/models")}: ${listing.words}`)];
    case "failed":
      return [check("reachable", false, listing.status, listing.words)];
    case "refused":
      return [check("reachable", true, listing.status, "answers"), check("key", false, listing.status, listing.words)];
    case "listed": {
      checks.push(check("reachable", true, listing.status, "answers"), check("key", true, listing.status, "accepted"));
      if (!listing.ids.includes(route.model)) {
        checks.push(check("model", false, listing.status, `not among the models it lists: ${someModels(listing.ids)}`));
        // Every call on the route would fail the same way: nothing more to learn from a request.
        return checks;
      }
      checks.push(check("model", true, listing.status, "listed"));
      // The probe still goes to an OpenAI-compatible route without native tools: its answer-limit field is checked.
      if (route.toolFormat !== "native" && route.provider !== "openai_compatible") return checks;
      break;
    }
    case "unoffered":
      checks.push(check("reachable", true, listing.status, `answers (no model list at /models: ${listing.status})`));
      break;
  }
  return [...checks, ...(await probeChecks(route, options, timeoutMs, listing.kind === "listed"))];
}

/**
 * One tiny request: settles the key and the model where the model list did not (`listed` false), whether tools
 * are accepted when the route sends them natively, and whether the answer limit is accepted in the field the loop
 * sends it in (an OpenAI-compatible route's maxTokensField: a reasoning model refuses `max_tokens`).
 */
async function probeChecks(
  route: HttpRoute,
  { key, redact }: RouteHealthOptions,
  timeoutMs: number,
  listed: boolean,
): Promise<HealthCheck[]> {
  const tools = route.toolFormat === "native";
  const limitField = route.maxTokensField ?? "max_tokens";
  const messages = [{ role: "user", content: PROBE_PROMPT }];
  const body =
    route.provider === "anthropic"
      ? {
          model: route.model,
          max_tokens: 1,
          messages,
          ...(tools ? { tools: [{ ...nameOf(), input_schema: PROBE_TOOL.schema }] } : {}),
        }
      : {
          // The limit in the field the loop sends it in (a compaction always sends one), so a provider that refuses
          // that field fails here, not on the first compaction.
          model: route.model,
          messages,
          [limitField]: PROBE_MAX_TOKENS,
          ...(tools ? { tools: [{ type: "function", function: { ...nameOf(), parameters: PROBE_TOOL.schema } }] } : {}),
        };
  let response: Response;
  let text: string;
  try {
    response = await fetch(upstreamUrl(route, route.provider === "anthropic" ? "/messages" : "/chat/completions"), {
      method: "POST",
      headers: { ...upstreamHeaders(route, key ?? ""), "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const words = noAnswerWords(error, timeoutMs, redact);
    return [check(tools ? "tools" : "model", false, null, `a request on the model got no answer: ${words}`)];
  }
  const { status } = response;
  // The key and model checks this answer settles: none when the model list settled them already.
  const keyAndModel = (modelOk: boolean, message: string) =>
    listed ? [] : [check("key", true, status, "accepted"), check("model", modelOk, status, message)];
  if (response.ok) {
    return [...keyAndModel(true, "answers"), ...(tools ? [check("tools", true, status, "accepted")] : [])];
  }
  const words = shownUpstreamWords(text, redact);
  const said = upstreamWords(text);
  const cause = classifyUpstreamError(status, said);
  if (cause === "model_auth_failed") return [check("key", false, status, words)];
  if (route.provider === "openai_compatible" && said.param === limitField) {
    const other = limitField === "max_tokens" ? "max_completion_tokens" : "max_tokens";
    return [
      ...keyAndModel(true, "not refused by name"),
      check("request", false, status, `${words} (the route sends ${limitField}: set its maxTokensField to '${other}')`),
    ];
  }
  if (cause === "model_not_found" || status === 404) {
    // Not found: the model (or, for a listed one, the request with the tool); the key is not what this answer says.
    return [check(listed ? "tools" : "model", false, status, words)];
  }
  // Refused otherwise: with a tool in the request, that is the tools check's failure (the model was not refused by
  // name); without one, the model's.
  return tools
    ? [...keyAndModel(true, "not refused by name"), check("tools", false, status, words)]
    : keyAndModel(false, words);
}

const nameOf = () => ({ name: PROBE_TOOL.name, description: PROBE_TOOL.description });

/** Workers AI: the binding answers a one-word request; offline (`npm start`, tests) it is there but refuses. */
async function workersAiChecks(route: ModelRoute, options: RouteHealthOptions): Promise<HealthCheck[]> {
  const ai = aiBinding(options.env);
  if (!ai) {
    return [check("reachable", false, null, 'the Worker has no AI binding ([ai] binding = "AI" in wrangler.toml)')];
  }
  const timeoutMs = options.timeoutMs ?? UPSTREAM_CHECK_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      ai.run(route.model, { messages: [{ role: "user", content: PROBE_PROMPT }], max_tokens: 1 }),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    const words = options.redact(error instanceof Error ? error.message : String(error));
    return [
      check(
        "reachable",
        false,
        null,
        `Workers AI did not answer: ${words} (the AI binding is remote: offline, as under npm start, it refuses every call)`,
      ),
    ];
  } finally {
    clearTimeout(timer);
  }
  return [check("reachable", true, null, "the AI binding answers"), check("model", true, null, "answers")];
}

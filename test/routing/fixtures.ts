// Helpers for the model route tests: routes to the two scripted upstreams (each with its own key, named by a
// secret), a mode on a route, and a message that carries a script for each upstream.
import { env } from "cloudflare:workers";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import { uniqueName } from "../mcp/fixtures";

// The deployment's routes, named by the Worker's secrets: an operator's to write.
const admin = TEST_KEYS.operator.key;

export interface RouteBody {
  provider?: "openai_compatible" | "workers_ai" | "anthropic";
  model?: string;
  baseUrl?: string;
  apiKeySecret?: string;
  toolFormat?: "native" | "json";
  timeoutMs?: number;
  fallbacks?: string[];
  contextTokens?: number;
  anthropicVersion?: string;
  inputModalities?: ("text" | "image")[];
  inputPricePerMTok?: number;
  outputPricePerMTok?: number;
  cachedInputPricePerMTok?: number;
  cacheWritePricePerMTok?: number;
  promptCaching?: boolean;
  promptCacheTtl?: "5m" | "1h";
  promptCacheKey?: boolean;
  maxTokensField?: "max_tokens" | "max_completion_tokens";
}

/** Writes a route named `name` (a new unique name when absent); returns its name. */
export async function putRoute(body: RouteBody, name = uniqueName("route")): Promise<string> {
  const { status, json } = await call("PUT", `/admin/model-routes/${name}`, body, admin);
  if (status !== 201 && status !== 200) throw new Error(`route not written (${status}): ${JSON.stringify(json)}`);
  return name;
}

/** A route to the first scripted upstream (the one `default` uses), with its key by secret. */
export const toUpstreamA = (body: RouteBody = {}, name?: string) =>
  putRoute(
    {
      provider: "openai_compatible",
      model: "model-a",
      baseUrl: `${env.TEST_UPSTREAM_URL}/v1`,
      apiKeySecret: "UPSTREAM_A_KEY",
      ...body,
    },
    name,
  );

/** A route to the second scripted upstream, with its own key. */
export const toUpstreamB = (body: RouteBody = {}, name?: string) =>
  putRoute(
    {
      provider: "openai_compatible",
      model: "model-b",
      baseUrl: `${env.TEST_UPSTREAM_B_URL}/v1`,
      apiKeySecret: "UPSTREAM_B_KEY",
      ...body,
    },
    name,
  );

/** A mode (general's tools) whose model calls take `route`; returns its key. */
export async function modeOnRoute(route: string, tools: string[] = ["agent_hello_world"]): Promise<string> {
  const key = uniqueName("routed");
  const { status, json } = await call(
    "PUT",
    `/admin/modes/${key}`,
    {
      displayName: "Routed mode",
      description: "A mode on its own model route.",
      systemPrompt: "Answer briefly.",
      tools,
      modelRoute: route,
    },
    admin,
  );
  if (status !== 201 && status !== 200) throw new Error(`mode not written (${status}): ${JSON.stringify(json)}`);
  return key;
}

/** The system message of a request body the upstream received. */
export function systemPromptOf(body: Record<string, unknown>): string {
  const messages = body.messages as { role: string; content: string }[];
  return messages.find((m) => m.role === "system")?.content ?? "";
}

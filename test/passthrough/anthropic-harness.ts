// The passthrough's anthropic model routes in tests: a route to the scripted Anthropic upstream (its key by
// secret), the official `@anthropic-ai/sdk` pointed at the Worker, and the usage rows a key's requests left.
import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { putRoute, type RouteBody } from "../routing/fixtures";
import { type TestKey, type TestWorker, worker } from "./harness";

/** An anthropic route to the scripted Anthropic upstream (model `claude-test`); returns its name. */
export function toAnthropic(body: RouteBody = {}): Promise<string> {
  return putRoute({
    provider: "anthropic",
    model: "claude-test",
    baseUrl: env.TEST_ANTHROPIC_URL,
    apiKeySecret: "TEST_ANTHROPIC_API_KEY",
    ...body,
  });
}

/** The official client with its base URL our host; `sent` collects the bodies it sent, as it sent them. */
export function anthropic(key: TestKey, options: { through?: TestWorker; sent?: string[] } = {}): Anthropic {
  const through = options.through ?? worker;
  return new Anthropic({
    apiKey: key.key,
    baseURL: "http://localhost",
    maxRetries: 0,
    fetch: (input, init) => {
      if (typeof init?.body === "string") options.sent?.push(init.body);
      return through.fetch(input, init);
    },
  });
}

export interface UsageRow {
  route: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  outcome: string;
}

/** The usage rows of a key's requests, oldest first. */
export async function usageRows(key: TestKey): Promise<UsageRow[]> {
  const { results } = await env.DB.prepare(
    `SELECT route, model, prompt_tokens, completion_tokens, total_tokens, outcome FROM usage_records
     WHERE key_id = ? ORDER BY rowid`,
  )
    .bind(key.keyId)
    .all<UsageRow>();
  return results;
}

/** A tool for the tests' round trips. */
export const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

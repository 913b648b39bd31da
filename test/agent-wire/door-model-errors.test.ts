// The agent's doors answer a model failure with one status and code each (docs/errors.md): the causes a client can
// act on with their own (a context too long as OpenAI answers it, 400 `context_length_exceeded`; a rate limit 429
// with Retry-After), the server's own troubles 502 `agent_model_failed` naming the cause; the Messages door in
// Anthropic's error types; a stream's error event with the Retry-After in it; MCP's tool result with the cause.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { openAIContextLengthExceeded, openAIModelNotFound, type ScriptStep } from "../upstream/script-types";

const ORIGIN = "http://aptix.test";

interface DoorCase {
  steps: ScriptStep[];
  status: number;
  code: string;
  anthropicType: string;
  retryAfter: string | null;
}

const rateLimited = (seconds: string): ScriptStep => ({
  type: "error",
  status: 429,
  body: { error: { message: "Rate limit reached.", type: "requests", param: null, code: "rate_limit_exceeded" } },
  headers: { "retry-after": seconds },
});

const CASES: Record<string, DoorCase> = {
  context_length_exceeded: {
    steps: [{ type: "error", status: 400, body: openAIContextLengthExceeded(8192, 9100) }],
    status: 400,
    code: "context_length_exceeded",
    anthropicType: "invalid_request_error",
    retryAfter: null,
  },
  model_rate_limited: {
    steps: [rateLimited("0"), rateLimited("0"), rateLimited("7")],
    status: 429,
    code: "model_rate_limited",
    anthropicType: "rate_limit_error",
    retryAfter: "7",
  },
  model_not_found: {
    steps: [{ type: "error", status: 404, body: openAIModelNotFound("demo") }],
    status: 502,
    code: "agent_model_failed",
    anthropicType: "api_error",
    retryAfter: null,
  },
};

async function post(path: string, body: unknown, headers: Record<string, string>) {
  return exports.default.fetch(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

const bearer = { authorization: `Bearer ${TEST_KEYS.chat.key}` };

describe("model failures on the agent's doors", () => {
  for (const [cause, expected] of Object.entries(CASES)) {
    it(`answers ${cause} on the chat completions door with ${expected.status} ${expected.code}`, async () => {
      const script = await scriptUpstream(expected.steps);
      const response = await post(
        "/agent/v1/chat/completions",
        { model: "aptix-agent/general", messages: [{ role: "user", content: `hi ${script.marker}` }] },
        bearer,
      );
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect([response.status, body.error.code, response.headers.get("retry-after")]).toEqual([
        expected.status,
        expected.code,
        expected.retryAfter,
      ]);
      if (expected.code === "agent_model_failed") expect(body.error.message).toContain(`(${cause})`);
    });

    it(`answers ${cause} on the Messages door with ${expected.status} ${expected.anthropicType}`, async () => {
      const script = await scriptUpstream(expected.steps);
      const response = await post(
        "/agent/v1/messages",
        { model: "aptix-agent/general", max_tokens: 64, messages: [{ role: "user", content: `hi ${script.marker}` }] },
        { "x-api-key": TEST_KEYS.chat.key },
      );
      const body = (await response.json()) as { type: string; error: { type: string } };
      expect([response.status, body.type, body.error.type, response.headers.get("retry-after")]).toEqual([
        expected.status,
        "error",
        expected.anthropicType,
        expected.retryAfter,
      ]);
    });
  }

  it("answers a rate limit on the Responses door with 429 model_rate_limited and Retry-After", async () => {
    const script = await scriptUpstream(CASES.model_rate_limited?.steps ?? []);
    const response = await post(
      "/agent/v1/responses",
      { model: "aptix-agent/general", input: `hi ${script.marker}` },
      bearer,
    );
    const body = (await response.json()) as { error: { code: string } };
    expect([response.status, body.error.code, response.headers.get("retry-after")]).toEqual([
      429,
      "model_rate_limited",
      "7",
    ]);
  });

  it("ends a chat completions stream with an error event carrying the code and retry_after_seconds", async () => {
    const script = await scriptUpstream(CASES.model_rate_limited?.steps ?? []);
    const response = await post(
      "/agent/v1/chat/completions",
      { model: "aptix-agent/general", stream: true, messages: [{ role: "user", content: `hi ${script.marker}` }] },
      bearer,
    );
    const events = (await response.text()).split("\n\n").filter((e) => e.startsWith("data: {"));
    const last = JSON.parse(events.at(-1)?.slice("data: ".length) ?? "{}") as {
      error?: { code: string; type: string; retry_after_seconds?: number };
    };
    expect(last.error).toMatchObject({ code: "model_rate_limited", type: "rate_limit_error", retry_after_seconds: 7 });
  });
});

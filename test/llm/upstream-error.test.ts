// The one reading of an upstream's error answer: its status and its own code or type, in each provider's body shape,
// into our cause; "the context is too long" only when the upstream says so; Retry-After in seconds.
import { describe, expect, it } from "vitest";
import { retryDelay } from "../../src/llm/http-model-call";
import { classifyUpstreamError, modelErrorOf, retryAfterSeconds, upstreamWords } from "../../src/llm/upstream-error";
import {
  anthropicModelNotFound,
  anthropicPromptTooLong,
  openAIContextLengthExceeded,
  openAIModelNotFound,
} from "../upstream/script-types";

const anthropic = (error: { type: string; message: string }) => JSON.stringify({ type: "error", error });

const CASES: [string, number, string, string][] = [
  ["OpenAI's unknown model", 404, JSON.stringify(openAIModelNotFound("demo")), "model_not_found"],
  ["Anthropic's unknown model", 404, anthropic(anthropicModelNotFound("claude-x")), "model_not_found"],
  [
    "vLLM's unknown model",
    404,
    '{"object":"error","message":"The model `demo` does not exist.","type":"NotFoundError","code":404}',
    "model_not_found",
  ],
  [
    "Ollama's unknown model",
    404,
    '{"error":{"message":"model \\"demo\\" not found, try pulling it first","type":"api_error"}}',
    "model_not_found",
  ],
  [
    "Workers AI's unknown model",
    400,
    '{"success":false,"errors":[{"code":5007,"message":"No such model demo"}]}',
    "model_not_found",
  ],
  ["a 404 that names no model (a wrong URL)", 404, "<html>Not Found</html>", "model_unavailable"],
  [
    "OpenAI's wrong key",
    401,
    '{"error":{"message":"Incorrect API key","code":"invalid_api_key"}}',
    "model_auth_failed",
  ],
  ["Anthropic's permission refusal", 403, anthropic({ type: "permission_error", message: "no" }), "model_auth_failed"],
  [
    "OpenAI's context too long",
    400,
    JSON.stringify(openAIContextLengthExceeded(8192, 9000)),
    "context_length_exceeded",
  ],
  ["Anthropic's prompt too long", 400, anthropic(anthropicPromptTooLong(210_000, 200_000)), "context_length_exceeded"],
  [
    "vLLM's context in its words",
    400,
    '{"object":"error","message":"This model\'s maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","code":400}',
    "context_length_exceeded",
  ],
  ["a 400 that says only 'too long'", 400, '{"error":{"message":"messages: too long"}}', "model_bad_request"],
  ["OpenAI's rate limit", 429, '{"error":{"message":"slow","code":"rate_limit_exceeded"}}', "model_rate_limited"],
  ["Azure's content filter", 400, '{"error":{"message":"filtered","code":"content_filter"}}', "content_filtered"],
  ["OpenAI's content policy", 400, '{"error":{"message":"no","code":"content_policy_violation"}}', "content_filtered"],
  ["any other 400", 400, '{"error":{"message":"Invalid value for temperature"}}', "model_bad_request"],
  ["a 422", 422, "{}", "model_bad_request"],
  ["a 503", 503, "Service Unavailable", "model_unavailable"],
  ["Anthropic's overload", 529, anthropic({ type: "overloaded_error", message: "Overloaded" }), "model_unavailable"],
  ["a gateway timeout", 504, "", "model_timeout"],
];

describe("classifyUpstreamError", () => {
  for (const [what, status, body, cause] of CASES) {
    it(`reads ${what} (${status}) as ${cause}`, () => {
      expect(classifyUpstreamError(status, upstreamWords(body))).toBe(cause);
    });
  }
});

describe("retryAfterSeconds", () => {
  it("reads delta-seconds, rounding a fraction up", () => {
    expect([retryAfterSeconds("7"), retryAfterSeconds("0.2"), retryAfterSeconds(null)]).toEqual([7, 1, null]);
  });

  it("reads an HTTP date as the seconds until it", () => {
    const now = Date.parse("2026-11-28T12:00:00Z");
    expect(retryAfterSeconds("Sat, 28 Nov 2026 12:00:30 GMT", now)).toBe(30);
  });

  it("ignores a value it cannot read", () => {
    expect(retryAfterSeconds("soon")).toBeNull();
  });

  it("reads 0 only when the upstream says 0: a date already past is 1", () => {
    const now = Date.parse("2026-11-28T12:00:00Z");
    expect([retryAfterSeconds("0"), retryAfterSeconds("Sat, 28 Nov 2026 11:59:00 GMT", now)]).toEqual([0, 1]);
  });

  it("is the retries' wait too: an HTTP date waits until it (at most 10 s), none backs off", () => {
    const now = Date.parse("2026-11-28T12:00:00Z");
    expect([
      retryDelay(0, "Sat, 28 Nov 2026 12:00:03 GMT", 250, now),
      retryDelay(0, "Sat, 28 Nov 2026 12:01:00 GMT", 250, now),
      retryDelay(1, null, 250, now),
    ]).toEqual([3000, 10_000, 500]);
  });
});

describe("modelErrorOf", () => {
  const shown = (status: number) => {
    const error = modelErrorOf(status, '{"error":{"message":"busy"}}', "7", (t) => t, "detail");
    return [error.code, error.message, error.retryAfterSeconds];
  };

  it("passes Retry-After on with a 429 and a 503, and not with a 504, which shows the default timeout text", () => {
    expect([shown(429), shown(503), shown(504)]).toEqual([
      ["model_rate_limited", "The model service is rate limiting this server; try again in a minute.", 7],
      ["model_unavailable", "The model service is unavailable; try again later.", 7],
      ["model_timeout", "The model did not answer in time.", null],
    ]);
  });
});

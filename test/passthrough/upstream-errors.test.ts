// When the upstream fails: its status and OpenAI error body reach the client (the SDK raises them as
// APIError), any other body becomes a fixed text for its status (its start logged, never quoted), and
// unreachable or silent upstreams become 502 and 504.
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it, vi } from "vitest";
import { upstreamErrorResponse } from "../../src/passthrough/upstream-errors";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { scriptUpstream } from "../fixtures/upstream";
import { type ErrorBody, newChatKey, openai, post, sseEvents, workerWith } from "./harness";

const ask = (marker: string) => ({ model: "gpt-test", messages: [{ role: "user" as const, content: marker }] });

/** An error page as a web framework writes it: the upstream's own address and a stack of its source files. */
const HTML_500 = `<html><head><title>500 Internal Server Error</title></head><body>
<h1>Internal Server Error</h1><p>POST ${env.TEST_UPSTREAM_URL}/v1/chat/completions</p>
<pre>Error: boom
    at handler (/srv/llm-gateway/src/server.js:42:11)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)</pre></body></html>`;
const UPSTREAM_HOST = new URL(env.TEST_UPSTREAM_URL).host;

describe("upstream errors", () => {
  it("surfaces an upstream 500 with its status and message", async () => {
    const script = await scriptUpstream([
      {
        type: "error",
        status: 500,
        body: { error: { message: "The server had an error.", type: "server_error", code: null, param: null } },
      },
    ]);
    const error = await openai(await newChatKey())
      .chat.completions.create(ask(script.marker))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 500, type: "server_error" });
    expect(error instanceof Error ? error.message : "").toContain("The server had an error.");
  });

  it("surfaces an upstream 429 with its status, message and Retry-After", async () => {
    const script = await scriptUpstream([
      {
        type: "error",
        status: 429,
        headers: { "retry-after": "7", "x-ratelimit-remaining-requests": "0" },
        body: { error: { message: "Rate limit reached for gpt-test.", type: "requests", code: "rate_limit_exceeded" } },
      },
    ]);
    const error = await openai(await newChatKey())
      .chat.completions.create(ask(script.marker))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    expect(error instanceof OpenAI.APIError ? error.headers.get("retry-after") : null).toBe("7");
    expect(error instanceof OpenAI.APIError ? error.headers.get("x-ratelimit-remaining-requests") : null).toBe("0");
  });

  it("answers a non-JSON upstream error body with a fixed text for its status, in OpenAI's shape", async () => {
    const script = await scriptUpstream([{ type: "error", status: 503, body: "<html>Service Unavailable</html>" }]);
    const response = await post("/chat/completions", await newChatKey(), ask(script.marker));
    expect(response.status).toBe(503);
    const body = (await response.json()) as ErrorBody;
    expect(body.error).toEqual({
      message: "The model service is unavailable; try again later.",
      type: "upstream_error",
      code: "upstream_503",
      param: null,
    });
  });

  it("never quotes an upstream's HTML 500 page: no upstream address, no stack", async () => {
    const script = await scriptUpstream([{ type: "error", status: 500, body: HTML_500 }]);
    const response = await post("/chat/completions", await newChatKey(), ask(script.marker));
    const text = await response.text();
    expect([response.status, (JSON.parse(text) as ErrorBody).error.message]).toEqual([
      500,
      "The model service is unavailable; try again later.",
    ]);
    expect(text).not.toContain(UPSTREAM_HOST);
    expect(text).not.toMatch(/boom|\/srv\/|server\.js|<html>/);
  });

  it("logs the status and the start of an upstream error body it does not quote, with the request id", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const script = await scriptUpstream([{ type: "error", status: 500, body: HTML_500 }]);
      const response = await post("/chat/completions", await newChatKey(), ask(script.marker));
      const logged = errors.mock.calls
        .map((call) => JSON.parse(String(call[0])) as Record<string, string>)
        .find((line) => line.tag === "[passthrough_upstream_error]");
      expect(logged).toMatchObject({
        requestId: response.headers.get("x-request-id"),
        status: "500",
        route: "default",
      });
      expect(logged?.body).toContain("Error: boom");
    } finally {
      errors.mockRestore();
    }
  });

  it("hands the upstream's error body to the logger it is given, cut to its first 500 characters", () => {
    const logger = new RecordingAdminLogger();
    const page = `<html>${"x".repeat(2_000)}</html>`;
    upstreamErrorResponse(new Response(page, { status: 502 }), page, { logger, route: "fast", redact: (text) => text });
    expect(logger.errors).toEqual([
      {
        tag: "[passthrough_upstream_error]",
        message: "The upstream answered an error that is not OpenAI-shaped; the client got a fixed text.",
        pairs: [
          ["status", "502"],
          ["route", "fast"],
          ["body", page.slice(0, 500)],
        ],
      },
    ]);
  });

  it("sends an HTML error page that arrives after a stream was committed as a frame with the fixed text", async () => {
    const script = await scriptUpstream([{ type: "error", status: 500, delayFirstByteMs: 300, body: HTML_500 }]);
    const through = workerWith({ PASSTHROUGH_KEEPALIVE_MS: "50" });
    const response = await post(
      "/chat/completions",
      await newChatKey(),
      { ...ask(script.marker), stream: true },
      {},
      through,
    );
    const frames = sseEvents(await response.text()).filter((event) => event.startsWith("data: "));
    expect(frames.map((frame) => (JSON.parse(frame.slice("data: ".length)) as ErrorBody).error)).toEqual([
      {
        message: "The model service is unavailable; try again later.",
        type: "upstream_error",
        code: "upstream_500",
        param: null,
      },
    ]);
    await through.settled();
  });

  it("answers an upstream 401 about the server's own key with a 502 that does not blame the client", async () => {
    const script = await scriptUpstream([
      {
        type: "error",
        status: 401,
        body: { error: { message: "Incorrect API key provided: sk-****abcd.", type: "invalid_request_error" } },
      },
    ]);
    const response = await post("/chat/completions", await newChatKey(), ask(script.marker));
    expect(response.status).toBe(502);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("upstream_auth_failed");
    expect(body.error.message).not.toContain("sk-");
  });

  it("answers an upstream 403 about the server's account with a 502 too", async () => {
    const script = await scriptUpstream([
      {
        type: "error",
        status: 403,
        body: {
          error: { message: "Project proj_abc does not have access to model gpt-x.", type: "invalid_request_error" },
        },
      },
    ]);
    const response = await post("/chat/completions", await newChatKey(), ask(script.marker));
    expect(response.status).toBe(502);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("upstream_auth_failed");
    expect(body.error.message).not.toContain("proj_abc");
  });

  it("answers 502 when the upstream cannot be reached, without quoting the upstream's address", async () => {
    const through = workerWith({ LLM_BASE_URL: "http://127.0.0.1:9/secret-path/v1" });
    const error = await openai(await newChatKey(), through)
      .chat.completions.create(ask("unreachable"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 502, type: "upstream_error", code: "upstream_unreachable" });
    expect(error instanceof Error ? error.message : "").not.toMatch(/127\.0\.0\.1|secret/);
  });

  it("answers 504 when the upstream sends no first byte in time", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const through = workerWith({ PASSTHROUGH_FIRST_BYTE_TIMEOUT_MS: "200" });
    const response = await post("/chat/completions", await newChatKey(), ask(script.marker), {}, through);
    expect(response.status).toBe(504);
    expect(((await response.json()) as ErrorBody).error).toEqual({
      message: "The upstream LLM sent nothing within 200 ms (model route 'default').",
      type: "upstream_error",
      code: "upstream_timeout",
      param: null,
    });
    await through.settled();
  });
});

// When the upstream fails: its status and OpenAI error body reach the client (the SDK raises them as
// APIError), a non-JSON body is wrapped, and unreachable or silent upstreams become 502 and 504.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { type ErrorBody, newChatKey, openai, post, workerWith } from "./harness";

const ask = (marker: string) => ({ model: "gpt-test", messages: [{ role: "user" as const, content: marker }] });

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

  it("wraps a non-JSON upstream error body in OpenAI's error shape, keeping the status", async () => {
    const script = await scriptUpstream([{ type: "error", status: 503, body: "<html>Service Unavailable</html>" }]);
    const response = await post("/chat/completions", await newChatKey(), ask(script.marker));
    expect(response.status).toBe(503);
    const body = (await response.json()) as ErrorBody;
    expect(body.error).toEqual({
      message: "The upstream LLM answered 503: <html>Service Unavailable</html>",
      type: "upstream_error",
      code: "upstream_503",
      param: null,
    });
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
    const through = workerWith({ LLM_BASE_URL: "http://user:secret@127.0.0.1:9/v1" });
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

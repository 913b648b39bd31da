// A route that takes a JSON body takes it only as JSON: without `content-type: application/json` it answers 415
// in OpenAI's error shape, saying to send JSON; a charset parameter is still JSON.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders } from "../fixtures/keys";
import type { ErrorBody } from "../fixtures/sessions";

const BODY = JSON.stringify({ mode: "general" });

function createSession(headers: Record<string, string>, body: BodyInit = BODY): Promise<Response> {
  return exports.default.fetch("http://aptix.test/context/sessions", {
    method: "POST",
    headers: { ...authHeaders(), ...headers },
    body,
  });
}

describe("JSON routes and the content type", () => {
  it("answers a JSON body sent without a content type with 415", async () => {
    // Bytes, not a string: fetch gives a string body `text/plain` on its own.
    const response = await createSession({}, new TextEncoder().encode(BODY));
    expect(response.status).toBe(415);
    expect(((await response.json()) as ErrorBody).error).toEqual({
      message: "The request body must be JSON, sent with content-type: application/json (this request has none).",
      type: "invalid_request_error",
      code: "unsupported_media_type",
      param: null,
    });
  });

  it("answers a body sent as text/plain with 415, naming the content type it got", async () => {
    const response = await createSession({ "content-type": "text/plain" });
    expect(response.status).toBe(415);
    expect(((await response.json()) as ErrorBody).error).toMatchObject({
      code: "unsupported_media_type",
      message:
        "The request body must be JSON, sent with content-type: application/json (this request's is 'text/plain').",
    });
  });

  it("answers an empty body without a content type with 415, not as an empty JSON object", async () => {
    const response = await createSession({}, new Uint8Array());
    expect([response.status, ((await response.json()) as ErrorBody).error.code]).toEqual([
      415,
      "unsupported_media_type",
    ]);
  });

  it("takes application/json with a charset", async () => {
    const response = await createSession({ "content-type": "application/json; charset=utf-8" });
    expect(response.status).toBe(201);
  });

  it("answers text/plain with 415 on every route /openapi.json says takes a JSON body", async () => {
    const doc = (await (
      await exports.default.fetch("http://aptix.test/openapi.json", { headers: authHeaders() })
    ).json()) as { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>> };
    const answers: Record<string, string> = {};
    // The Messages wire (the passthrough's and the agent's) answers in Anthropic's shape (`{"type":"error","error":{"type","message"}}`): no code.
    const anthropicAnswers: Record<string, string> = {};
    for (const [path, operations] of Object.entries(doc.paths)) {
      // The MCP server speaks JSON-RPC: its transport refuses other media types in that protocol's own shape.
      if (path === "/mcp") continue;
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.requestBody?.content?.["application/json"]) continue;
        // A path parameter of a valid shape (a secret's name is upper case), so the body is what is refused.
        const sample = path.startsWith("/admin/secrets") ? "X" : "x";
        const response = await exports.default.fetch(`http://aptix.test${path.replace(/\{[^}]+\}/g, sample)}`, {
          method: method.toUpperCase(),
          headers: { ...authHeaders(), "content-type": "text/plain" },
          body: "{}",
        });
        if (path.startsWith("/v1/messages") || path.startsWith("/agent/v1/messages")) {
          const body = (await response.json()) as { type: string; error: { type: string } };
          anthropicAnswers[`${method} ${path}`] = `${response.status} ${body.type} ${body.error.type}`;
          continue;
        }
        answers[`${method} ${path}`] = `${response.status} ${((await response.json()) as ErrorBody).error.code}`;
      }
    }
    expect(Object.keys(answers).length).toBeGreaterThan(15);
    expect(new Set(Object.values(answers))).toEqual(new Set(["415 unsupported_media_type"]));
    expect(anthropicAnswers).toEqual({
      "post /v1/messages": "415 error invalid_request_error",
      "post /v1/messages/count_tokens": "415 error invalid_request_error",
      "post /agent/v1/messages": "415 error invalid_request_error",
      "post /agent/v1/messages/count_tokens": "415 error invalid_request_error",
    });
  });
});

// Our API key as Anthropic's clients send it: `x-api-key`, read only when there is no Authorization header.
import { describe, expect, it } from "vitest";
import { type ErrorBody, newChatKey, worker } from "../passthrough/harness";

const models = (headers: Record<string, string>) => worker.fetch("http://localhost/v1/models", { headers });

describe("x-api-key", () => {
  it("authenticates a request that sends our key as x-api-key", async () => {
    const response = await models({ "x-api-key": (await newChatKey()).key });
    expect(response.status).toBe(200);
  });

  it("refuses a wrong x-api-key with 401 invalid_api_key", async () => {
    const response = await models({ "x-api-key": "sk-aptix-not-a-key" });
    const body = (await response.json()) as ErrorBody;
    expect([response.status, body.error.code]).toEqual([401, "invalid_api_key"]);
  });

  it("reads the Authorization header first: a wrong bearer token is refused even beside a right x-api-key", async () => {
    const response = await models({
      authorization: "Bearer sk-aptix-not-a-key",
      "x-api-key": (await newChatKey()).key,
    });
    expect(response.status).toBe(401);
  });

  it("refuses a wrong x-api-key on /v1/messages with 401 in Anthropic's shape", async () => {
    const response = await worker.fetch("http://localhost/v1/messages", {
      method: "POST",
      headers: { "x-api-key": "sk-aptix-not-a-key", "content-type": "application/json" },
      body: JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("request-id")).toBeTruthy();
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "Invalid API key." },
    });
  });

  it("authenticates the agent's Messages door with x-api-key, as on /v1/messages", async () => {
    const response = await worker.fetch("http://localhost/agent/v1/messages/count_tokens", {
      method: "POST",
      headers: { "x-api-key": (await newChatKey()).key, "content-type": "application/json" },
      body: JSON.stringify({ model: "aptix-agent/general", messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
  });

  it("refuses a wrong x-api-key on /agent/v1/messages with 401 in Anthropic's shape", async () => {
    const response = await worker.fetch("http://localhost/agent/v1/messages", {
      method: "POST",
      headers: { "x-api-key": "sk-aptix-not-a-key", "content-type": "application/json" },
      body: JSON.stringify({
        model: "aptix-agent/general",
        max_tokens: 8,
        messages: [{ role: "user", content: "Hi" }],
      }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("request-id")).toBeTruthy();
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "Invalid API key." },
    });
  });
});

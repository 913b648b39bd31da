// GET /v1/models through the passthrough: the upstream's list, our key checked, 503 without an upstream.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { newChatKey, openai, workerWith } from "./harness";

describe("GET /v1/models", () => {
  it("lists the upstream's models for a chat key", async () => {
    const models = await openai(await newChatKey()).models.list();
    expect(models.data.map((m) => m.id)).toEqual(["scripted-model"]);
  });

  it("answers an unknown key with 401, which the SDK raises as AuthenticationError", async () => {
    const error = await openai("sk-not-a-key")
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: "invalid_api_key", type: "authentication_error" });
  });

  it("answers a key without the chat scope with 403", async () => {
    const error = await openai(await newChatKey("org-a", ["admin"]))
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: "insufficient_scope" });
  });

  it("answers 503 naming LLM_BASE_URL when no upstream is configured", async () => {
    const error = await openai(await newChatKey(), workerWith({ LLM_BASE_URL: "" }))
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 503, code: "passthrough_not_configured" });
    expect(error instanceof Error ? error.message : "").toContain("LLM_BASE_URL");
  });
});

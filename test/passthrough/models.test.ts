// GET /v1/models through the passthrough: the upstream's list, and our key checked.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { newChatKey, openai } from "./harness";

describe("GET /v1/models", () => {
  it("lists the upstream's models for a chat key", async () => {
    const models = await openai(await newChatKey()).models.list();
    expect(models.data.map((m) => m.id)).toEqual([
      "scripted-model",
      "scripted-model-no-tools",
      "scripted-reasoning-model",
    ]);
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
});

describe("GET /v1/models/:model", () => {
  it("retrieves one model with the SDK's models.retrieve", async () => {
    const model = await openai(await newChatKey()).models.retrieve("scripted-model");
    expect([model.id, model.object]).toEqual(["scripted-model", "model"]);
  });

  it("passes the upstream's 404 for an unknown model on as the SDK's NotFoundError", async () => {
    const error = await openai(await newChatKey())
      .models.retrieve("no-such-model")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "model_not_found" });
  });
});

// What the passthrough refuses itself: a body that is not a JSON object, a `model` that is not a string,
// a `stream` that is not a boolean (each a 400 in OpenAI's shape naming the problem), a body not sent as JSON
// (415). Nothing is forwarded.
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { type ErrorBody, newChatKey, post } from "./harness";

async function refused(
  body: (marker: string) => string,
  headers: Record<string, string> = {},
): Promise<{ status: number; error: ErrorBody["error"] }> {
  const script = await scriptUpstream([{ type: "completion", content: "must not be asked" }]);
  const response = await post("/chat/completions", await newChatKey(), body(script.marker), headers);
  const { error } = (await response.json()) as ErrorBody;
  // The marker was in the body, so the upstream would have recorded anything forwarded to it.
  expect(await script.requests()).toEqual([]);
  return { status: response.status, error };
}

describe("passthrough input validation", () => {
  it("refuses a body that is not JSON", async () => {
    expect(await refused((m) => `model=gpt&prompt=${m}`)).toEqual({
      status: 400,
      error: {
        message: "The request body must be a JSON object.",
        type: "invalid_request_error",
        code: "invalid_json",
        param: null,
      },
    });
  });

  it("refuses a JSON array body", async () => {
    const { status, error } = await refused((m) => JSON.stringify([{ model: "gpt", content: m }]));
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: "invalid_json", message: "The request body must be a JSON object." });
  });

  it("refuses a model that is not a string, naming param 'model'", async () => {
    const { status, error } = await refused((m) =>
      JSON.stringify({ model: 4, messages: [{ role: "user", content: m }] }),
    );
    expect(status).toBe(400);
    expect(error).toEqual({
      message: "Invalid 'model' in the request body: must be a string.",
      type: "invalid_request_error",
      code: "invalid_request",
      param: "model",
    });
  });

  it("refuses a body without a model, naming param 'model'", async () => {
    const { status, error } = await refused((m) => JSON.stringify({ messages: [{ role: "user", content: m }] }));
    expect(status).toBe(400);
    expect(error).toMatchObject({
      message: "Invalid 'model' in the request body: you must provide a model parameter.",
      param: "model",
    });
  });

  it("refuses a stream flag that is not a boolean, naming param 'stream'", async () => {
    const { status, error } = await refused((m) =>
      JSON.stringify({ model: "gpt", stream: "yes", messages: [{ role: "user", content: m }] }),
    );
    expect(status).toBe(400);
    expect(error).toMatchObject({
      param: "stream",
      message: "Invalid 'stream' in the request body: must be true or false.",
    });
  });

  it("refuses a JSON body sent as text/plain with 415", async () => {
    const { status, error } = await refused(
      (m) => JSON.stringify({ model: "gpt", messages: [{ role: "user", content: m }] }),
      { "content-type": "text/plain" },
    );
    expect(status).toBe(415);
    expect(error).toMatchObject({ code: "unsupported_media_type", type: "invalid_request_error", param: null });
  });
});

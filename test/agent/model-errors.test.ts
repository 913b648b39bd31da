// A failed model call ends the turn with a fixed text and code for its cause; the upstream's own words (which
// can quote our key, its URL or a stack) reach the log only, never the answer, the stored turn or a frame.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OpenAIChatModel } from "../../src/llm/openai-chat-model";
import { inSessionObject, type TestConfig } from "../fixtures/in-object";
import { authHeaders } from "../fixtures/keys";
import { createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import type { ScriptStep } from "../upstream/script-types";

const SECRET = "upstream-secret-4f1d";
const htmlPage = `<html><head><title>500</title></head><body>Internal error at https://llm.internal.example/v1 (stack: at handler (/srv/app.js:12))</body></html>`;
const thrice = (step: ScriptStep): ScriptStep[] => [step, step, step];

async function failedTurn(steps: ScriptStep[], config: TestConfig = {}) {
  const script = await scriptUpstream(steps);
  return inSessionObject(config, async ({ reasoner, store, logger }) => {
    const outcome = await reasoner.startTurn(`hi ${script.marker}`);
    if (!outcome.ok) throw new Error(outcome.message);
    return { response: outcome.value, stored: JSON.stringify([store.turns(), store.messages()]), logger };
  });
}

/** A turn on the scripted upstream's model, without retries, each call given `callTimeoutMs`. */
async function turnWithin(callTimeoutMs: number, marker: string) {
  const model = new OpenAIChatModel({
    baseUrl: env.LLM_BASE_URL,
    apiKey: env.LLM_API_KEY ?? "",
    model: "m",
    callTimeoutMs,
    maxRetries: 0,
  });
  return inSessionObject(
    {},
    async ({ reasoner }) => {
      const outcome = await reasoner.startTurn(`hi ${marker}`);
      if (!outcome.ok) throw new Error(outcome.message);
      return outcome.value;
    },
    { model },
  );
}

describe("model errors in the loop", () => {
  it("answers an upstream 401 that quotes a secret with model_auth_failed and a fixed text, logging the detail", async () => {
    const { response, stored, logger } = await failedTurn([
      { type: "error", status: 401, body: { error: { message: `Incorrect API key provided: Bearer ${SECRET}` } } },
    ]);
    expect(response.error).toEqual({
      code: "model_auth_failed",
      message: "The model service refused this server's credentials; the operator must check its API key.",
    });
    expect(`${JSON.stringify(response)} ${stored}`).not.toContain(SECRET);
    const logged = logger.events.find((e) => e.tag === "[AgentReasoner_ModelCall]");
    expect(logged?.message).toContain(SECRET);
    expect(logged?.pairs.map(([k]) => k)).toEqual(["SessionId", "TurnId", "Code", "Status"]);
  });

  it("names the default route and LLM_MODEL's 'demo' when a real provider does not have that model", async () => {
    // The README's real-provider story with LLM_MODEL left at its default: the provider knows other models only.
    const script = await scriptUpstream([{ type: "completion", content: "unused" }], env.TEST_UPSTREAM_URL, {
      models: ["gpt-4o-mini"],
    });
    const response = await sendMessage(await createSession(), `hi ${script.marker}`);
    expect(response.error).toEqual({
      code: "model_not_found",
      message:
        "The model service of model route 'default' does not know the model 'demo'; the operator must set the route's model (LLM_MODEL for the default route) to one the service lists.",
    });
    const [request] = await script.requests();
    expect(JSON.parse(request?.body ?? "{}").model).toBe("demo");
  });

  it("answers an HTML 500 page with model_unavailable, quoting neither its URL nor its stack", async () => {
    const { response, stored } = await failedTurn(
      thrice({ type: "error", status: 500, body: htmlPage, headers: { "content-type": "text/html" } }),
    );
    expect(response.error).toEqual({
      code: "model_unavailable",
      message: "The model service is unavailable; try again later.",
    });
    expect(`${JSON.stringify(response)} ${stored}`).not.toMatch(/llm\.internal|app\.js/);
  });

  it("answers an upstream 429 that outlasts the retries with model_rate_limited", async () => {
    const { response } = await failedTurn(
      thrice({
        type: "error",
        status: 429,
        body: { error: { message: "Slow down" } },
        headers: { "retry-after": "0" },
      }),
    );
    expect(response.error?.code).toBe("model_rate_limited");
  });

  it("passes an upstream 503's Retry-After on with model_unavailable", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 503, body: { error: { message: "down" } }, headers: { "retry-after": "7" } },
    ]);
    const response = await turnWithin(5_000, script.marker);
    expect(response.error).toEqual({
      code: "model_unavailable",
      message: "The model service is unavailable; try again later.",
      retryAfterSeconds: 7,
    });
  });

  it("answers a model that does not answer in time with model_timeout", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const response = await turnWithin(150, script.marker);
    expect(response.error).toEqual({ code: "model_timeout", message: "The model did not answer within 150 ms." });
  });

  for (const toolFormat of ["native", "json"] as const) {
    it(`fails a turn whose model answers 200 text/html with model_bad_response (${toolFormat} format)`, async () => {
      const { response } = await failedTurn(
        [{ type: "json", body: htmlPage, headers: { "content-type": "text/html" } }],
        { toolFormat },
      );
      expect([response.status, response.text, response.error?.code]).toEqual(["failed", "", "model_bad_response"]);
    });
  }

  it("keeps the upstream's words out of the session view and the streamed frames", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 401, body: { error: { message: `Incorrect API key provided: Bearer ${SECRET}` } } },
    ]);
    const id = await createSession();
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/messages`, {
      method: "POST",
      headers: { ...authHeaders(), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: `hi ${script.marker}` }),
    });
    const frames = await response.text();
    expect(frames).toContain("model_auth_failed");
    expect(frames).not.toContain(SECRET);
    expect(JSON.stringify(await getSession(id))).not.toContain(SECRET);
  });
});

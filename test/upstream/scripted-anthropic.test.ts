// The scripted Anthropic upstream as code in workerd reaches it: started beside the Workers runtime by
// global-setup.ts, scripted through test/fixtures/upstream.ts, answering in the Messages API's shapes.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scriptAnthropic } from "../fixtures/upstream";
import { anthropicModelNotFound } from "./script-types";

const post = (body: unknown, key = env.TEST_ANTHROPIC_API_KEY ?? "") =>
  fetch(`${env.TEST_ANTHROPIC_URL}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("scripted Anthropic upstream", () => {
  it("answers the script named by the marker with a message and records the request", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "Hi there." }] }]);
    const response = await post({
      model: "claude-scripted-1",
      max_tokens: 64,
      messages: [{ role: "user", content: `hello ${script.marker}` }],
    });
    const body = (await response.json()) as { type: string; content: { type: string; text: string }[] };
    expect(body.type).toBe("message");
    expect(body.content).toEqual([{ type: "text", text: "Hi there." }]);
    expect((await script.bodies())[0]?.max_tokens).toBe(64);
  });

  it("answers a model it was not given as Anthropic does: 404 not_found_error 'model: <name>'", async () => {
    const script = await scriptAnthropic([], { models: ["claude-sonnet-4-5"] });
    const response = await post({ model: "demo", max_tokens: 8, messages: [{ role: "user", content: script.marker }] });
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect([response.status, body.type, body.error]).toEqual([404, "error", anthropicModelNotFound("demo")]);
  });

  it("answers a prompt longer than its context as Anthropic does: 400 'prompt is too long'", async () => {
    const script = await scriptAnthropic([], { contextTokens: 10 });
    const content = `${"long ".repeat(20)}${script.marker}`;
    const response = await post({ model: "m", max_tokens: 8, messages: [{ role: "user", content }] });
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect([response.status, body.error.type]).toEqual([400, "invalid_request_error"]);
    expect(body.error.message).toMatch(/^prompt is too long: \d+ tokens > 10 maximum$/);
  });

  it("refuses a prompt and max_tokens together beyond its context, at the script's charsPerToken, in Anthropic's words", async () => {
    const script = await scriptAnthropic([], { contextTokens: 200, charsPerToken: 2 });
    const messages = [{ role: "user", content: script.marker }];
    const tokens = Math.ceil(JSON.stringify({ messages }).length / 2);
    const response = await post({ model: "m", max_tokens: 190, messages });
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect([response.status, body.error]).toEqual([
      400,
      {
        type: "invalid_request_error",
        message: `input length and \`max_tokens\` exceed context limit: ${tokens} + 190 > 200, decrease input length or \`max_tokens\` and try again`,
      },
    ]);
  });

  it("counts no cache_control mark as input, in count_tokens and in a message's usage", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    const plain = { model: "m", max_tokens: 8, messages: [{ role: "user", content: script.marker }] };
    const marked = {
      ...plain,
      messages: [
        { role: "user", content: [{ type: "text", text: script.marker, cache_control: { type: "ephemeral" } }] },
      ],
    };
    const count = (body: unknown) =>
      fetch(`${env.TEST_ANTHROPIC_URL}/v1/messages/count_tokens`, {
        method: "POST",
        headers: {
          "x-api-key": env.TEST_ANTHROPIC_API_KEY ?? "",
          "anthropic-version": "2023-06-01",
          "content-type": "application/json",
        },
        body: JSON.stringify(body),
      }).then(async (r) => ((await r.json()) as { input_tokens: number }).input_tokens);
    const unmarked = {
      ...plain,
      messages: [{ role: "user", content: [{ type: "text", text: script.marker }] }],
    };
    const usage = ((await (await post(marked)).json()) as { usage: { input_tokens: number } }).usage;
    expect([await count(marked), usage.input_tokens]).toEqual([await count(unmarked), await count(unmarked)]);
  });

  it("refuses a wrong key with 401 authentication_error", async () => {
    const response = await post(
      { model: "claude-scripted-1", max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
      "sk-ant-wrong",
    );
    expect(response.status).toBe(401);
    const body = (await response.json()) as { type: string; error: { type: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("authentication_error");
  });
});

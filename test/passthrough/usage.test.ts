// Token usage the upstream reports is recorded in D1 per org and key, after the response: from a JSON
// answer's `usage` and from a stream's final `include_usage` chunk, read on the side of the relay.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, openai, post, type TestKey, workerWith } from "./harness";

interface UsageRow {
  org: string;
  key_id: string;
  endpoint: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

async function usageRows(key: TestKey): Promise<UsageRow[]> {
  const { results } = await env.DB.prepare(
    "SELECT org, key_id, endpoint, model, prompt_tokens, completion_tokens, total_tokens FROM usage_records WHERE key_id = ?",
  )
    .bind(key.keyId)
    .all<UsageRow>();
  return results;
}

describe("usage records", () => {
  it("records the usage of a JSON completion for the key's org", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "ok", usage: { prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 } },
    ]);
    const key = await newChatKey("org-b");
    const through = workerWith();
    await openai(key, through).chat.completions.create({
      model: "gpt-usage",
      messages: [{ role: "user", content: script.marker }],
    });
    await through.settled();
    expect(await usageRows(key)).toEqual([
      {
        org: "org-b",
        key_id: key.keyId,
        endpoint: "/v1/chat/completions",
        model: "gpt-usage",
        prompt_tokens: 30,
        completion_tokens: 5,
        total_tokens: 35,
      },
    ]);
  });

  it("records the usage of a streamed completion from its include_usage chunk", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "streamed", usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } },
    ]);
    const key = await newChatKey();
    const through = workerWith();
    const stream = await openai(key, through).chat.completions.create({
      model: "gpt-stream",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: script.marker }],
    });
    let streamedUsage: unknown = null;
    for await (const chunk of stream) if (chunk.usage) streamedUsage = chunk.usage;
    await through.settled();
    expect(streamedUsage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
    expect(await usageRows(key)).toMatchObject([
      {
        endpoint: "/v1/chat/completions",
        model: "gpt-stream",
        prompt_tokens: 9,
        completion_tokens: 3,
        total_tokens: 12,
      },
    ]);
  });

  it("records the input and output tokens of a Responses API stream's response.completed event", async () => {
    const completed = {
      type: "response.completed",
      response: { id: "resp_1", usage: { input_tokens: 20, output_tokens: 4, total_tokens: 24 } },
    };
    const script = await scriptUpstream([
      {
        type: "sse",
        events: [
          `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}`,
          `event: response.completed\ndata: ${JSON.stringify(completed)}`,
        ],
        end: "close",
      },
    ]);
    const key = await newChatKey();
    const through = workerWith();
    const response = await post("/responses", key, { model: "gpt-r", stream: true, input: script.marker }, {}, through);
    await response.text();
    await through.settled();
    expect(await usageRows(key)).toMatchObject([
      { endpoint: "/v1/responses", model: "gpt-r", prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 },
    ]);
  });

  it("records one row per completion when several finish together (one batched write)", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "a", usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
      { type: "completion", content: "b", usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } },
      { type: "completion", content: "c", usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } },
    ]);
    const key = await newChatKey();
    const through = workerWith();
    const client = openai(key, through);
    await Promise.all(
      [1, 2, 3].map(() =>
        client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: script.marker }] }),
      ),
    );
    await through.settled();
    const rows = await usageRows(key);
    expect(rows.map((r) => r.total_tokens).sort()).toEqual([2, 3, 4]);
  });

  it("records an estimate, from the request's and the answer's size, when the upstream reports no usage", async () => {
    const answer = { id: "x", object: "chat.completion", choices: [] };
    const script = await scriptUpstream([{ type: "json", body: answer }]);
    const key = await newChatKey();
    const through = workerWith();
    const body = JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: script.marker }] });
    const response = await through.fetch("http://localhost/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body,
    });
    expect(response.status).toBe(200);
    await through.settled();
    const prompt = Math.ceil(body.length / 4);
    const completion = Math.ceil(JSON.stringify(answer).length / 4);
    expect(await usageRows(key)).toMatchObject([
      { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    ]);
  });
});

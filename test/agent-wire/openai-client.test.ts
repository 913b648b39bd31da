// The agent's OpenAI door driven by the official `openai` client: models, a plain and a streamed answer, a
// client tool round trip, a history resent without the session header, approvals answered in words.
import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";

function client(): OpenAI {
  return new OpenAI({
    apiKey: TEST_KEYS.chat.key,
    baseURL: "http://aptix.test/agent/v1",
    maxRetries: 0,
    fetch: (input, init) => exports.default.fetch(input, init),
  });
}

describe("/agent/v1 with the openai client", () => {
  it("lists one model per mode", async () => {
    const models = await client().models.list();
    expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining(["aptix-agent/general", "aptix-agent/workspace"]));
  });

  it("retrieves one model by its id", async () => {
    const model = await client().models.retrieve("aptix-agent/workspace");
    expect(model).toMatchObject({ id: "aptix-agent/workspace", object: "model", owned_by: "aptix" });
  });

  it("answers a message as a chat completion, and names its session", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello from the agent." }]);
    const { data, response } = await client()
      .chat.completions.create({ model: "aptix-agent/general", messages: [{ role: "user", content: `hi ${script.marker}` }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("Hello from the agent.");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.object).toBe("chat.completion");
    expect(response.headers.get("x-aptix-session")).toMatch(/^[0-9a-f]{64}$/);
  });
});

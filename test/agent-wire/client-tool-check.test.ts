// The agent's OpenAI door checks a client's own tools before any session is reached: each against the tool
// contract, and against the built-in tools' names (a client's tool may not shadow one); 400 names the first.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

async function completeWith(tools: unknown[]) {
  const response = await exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEYS.chat.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "aptix-agent/general", messages: [{ role: "user", content: "hi" }], tools }),
  });
  return { status: response.status, body: (await response.json()) as ErrorBody };
}

const fn = (name: string, parameters: object = { type: "object", properties: {} }) => ({
  type: "function",
  function: { name, description: `The tool ${name}.`, parameters },
});

describe("the client's tools at /agent/v1/chat/completions", () => {
  it("refuses a tool named like a built-in tool, naming it", async () => {
    const { status, body } = await completeWith([fn("get_weather"), fn("agent_hello_world")]);
    expect(status).toBe(400);
    expect(body.error.param).toBe("tools.1");
    expect(body.error.message).toBe(
      "Invalid 'tools.1': Tool 'agent_hello_world' breaks the agent tool contract: the ToolName 'agent_hello_world' is already registered.",
    );
  });

  it("refuses two tools of one name, and a tool whose schema breaks the contract", async () => {
    const twice = await completeWith([fn("get_weather"), fn("get_weather")]);
    expect([twice.status, twice.body.error.param]).toEqual([400, "tools.1"]);
    expect(twice.body.error.message).toContain("the ToolName 'get_weather' is already registered");
    const required = await completeWith([fn("get_weather", { type: "object", properties: {}, required: ["city"] })]);
    expect([required.status, required.body.error.param]).toEqual([400, "tools.0"]);
    expect(required.body.error.message).toContain("requires 'city', which is not among its properties");
  });
});

// The scripted upstream itself: answers by script, streams like OpenAI, records what it was sent.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";

const post = (body: unknown) =>
  fetch(`${env.LLM_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.LLM_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("scripted upstream", () => {
  it("answers the script named by the marker and records the request", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hi there." }]);
    const response = await post({ model: "m", messages: [{ role: "user", content: `hello ${script.marker}` }] });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe("Hi there.");
    expect((await script.bodies())[0]?.model).toBe("m");
  });

  it("streams content and tool-call argument fragments, then [DONE]", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        content: "Reading.",
        toolCalls: [{ name: "f", arguments: '{"path":"a.txt"}' }],
        chunkSize: 4,
      },
    ]);
    const response = await post({ model: "m", stream: true, messages: [{ role: "user", content: script.marker }] });
    const text = await response.text();
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const args = events
      .slice(0, -1)
      .map(
        (e) =>
          JSON.parse(e.slice(6)) as { choices: { delta: { tool_calls?: { function: { arguments?: string } }[] } }[] },
      )
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .map((t) => t.function.arguments ?? "")
      .join("");
    expect(args).toBe('{"path":"a.txt"}');
  });

  it("refuses a request without its API key, like an OpenAI server", async () => {
    const response = await fetch(`${env.LLM_BASE_URL}/models`);
    expect(response.status).toBe(401);
  });
});

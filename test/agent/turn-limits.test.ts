// The turn's time limit, and results larger than the model's budget, inside a real session object.
import { describe, expect, it } from "vitest";
import { inSessionObject } from "../fixtures/in-object";
import { scriptUpstream } from "../fixtures/upstream";

describe("turn limits", () => {
  it("fails a turn that outlives the time limit, saying which limit, and frees the session", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const { response, status } = await inSessionObject({ turnTimeoutMs: 300 }, async ({ reasoner, store }) => ({
      response: await reasoner.startTurn(`think forever ${script.marker}`),
      status: store.status(),
    }));
    if (!response.ok) throw new Error(response.message);
    expect(response.value.status).toBe("failed");
    expect(response.value.error).toEqual({
      code: "turn_timeout",
      message:
        "The turn stopped at the time limit: it worked 0.3 s without a final answer (the limit is 0.3 s of working time; waiting for approvals or client results does not count).",
    });
    expect(status).toBe("idle");
  });

  it("sends the model a truncated result with a note, and keeps the whole result in the session", async () => {
    const name = "N".repeat(400);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: JSON.stringify({ name }) }] },
      { type: "completion", content: "ok" },
    ]);
    const stored = await inSessionObject({ toolResultBudgetChars: 100 }, async ({ reasoner, store }) => {
      const response = await reasoner.startTurn(`greet ${script.marker}`);
      if (!response.ok) throw new Error(response.message);
      return store.toolCalls(store.messages()[0]?.turnId ?? "")[0]?.resultJson ?? "";
    });
    expect(JSON.parse(stored).message).toBe(`Hello, ${name}! Welcome to Aptix.`);
    const sent = (await script.bodies()) as { messages: { content: string }[] }[];
    const seen = sent[1]?.messages.at(-1)?.content ?? "";
    expect(seen.startsWith(stored.slice(0, 100))).toBe(true);
    expect(seen).toContain(`[truncated: the result was ${stored.length} characters; the first 100 are shown.`);
  });
});

// An agent turn's usage rows name the turn they were made in (the admin page links a row to its timeline); the
// passthrough's rows name none.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { BASE_URL, newChatKey, workerWith } from "../passthrough/harness";

const usage = { prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 };

/** The turn ids of a session's rows once `count` are written: the object writes them in a batch after its reply. */
async function rowTurns(sessionId: string, count: number): Promise<(string | null)[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare(
      "SELECT turn_id FROM usage_records WHERE session_id = ? ORDER BY created_at",
    )
      .bind(sessionId)
      .all<{ turn_id: string | null }>();
    if (results.length >= count || Date.now() > deadline) return results.map((r) => r.turn_id);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("usage rows", () => {
  it("of an agent turn carry the turn each model call was made in", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }], usage },
      { type: "completion", content: "Greeted.", usage },
      { type: "completion", content: "Again.", usage },
    ]);
    const sessionId = await createSession();
    await sendMessage(sessionId, `greet ${script.marker}`);
    await sendMessage(sessionId, `again ${script.marker}`);
    const turns = (await getSession(sessionId)).turns.map((t) => t.turnId);
    expect(await rowTurns(sessionId, 3)).toEqual([turns[0], turns[0], turns[1]]);
  });

  it("of a passthrough call name no turn", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "hi", usage }]);
    const key = await newChatKey();
    const via = workerWith();
    const response = await via.fetch(`${BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-row", messages: [{ role: "user", content: script.marker }] }),
    });
    await response.json();
    await via.settled();
    const { results } = await env.DB.prepare("SELECT session_id, turn_id FROM usage_records WHERE key_id = ?")
      .bind(key.keyId)
      .all();
    expect(results).toEqual([{ session_id: null, turn_id: null }]);
  });
});

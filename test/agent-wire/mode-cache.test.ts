// The agent's OpenAI door keeps the modes it read for MODES_CACHE_MS in its isolate, as the model routes are
// kept: an admin write in the isolate is seen by the next message, a change elsewhere within the time, and a
// client that sends a D1 bookmark reads the mode anew.
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { cachedTurnReads } from "../../src/session/session-model";
import { freshDatabase } from "../fixtures/database";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";

beforeEach(freshDatabase);

const TTL = 10_000;

/** Sends one message through /agent/v1 in the general mode; answers with the system prompt the upstream got. */
async function systemPromptOfTurn(headers: Record<string, string> = {}): Promise<{ prompt: string; bookmark: string }> {
  const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
  const response = await exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
    method: "POST",
    headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", ...headers },
    body: JSON.stringify({
      model: "aptix-agent/general",
      messages: [{ role: "user", content: `hi ${script.marker}` }],
    }),
  });
  expect(response.status).toBe(200);
  const [system] = await script.messagesOf(0);
  return { prompt: system?.content ?? "", bookmark: response.headers.get("x-d1-bookmark") ?? "" };
}

async function setGeneralPromptInD1(prompt: string): Promise<void> {
  await env.DB.prepare("UPDATE modes SET system_prompt = ? WHERE key = 'general'").bind(prompt).run();
}

describe("the modes the agent's OpenAI door keeps (MODES_CACHE_MS)", () => {
  it("answers a mode from the isolate's copy until it is MODES_CACHE_MS old, then reads D1 again", async () => {
    const t0 = 1_000_000;
    const first = await cachedTurnReads(env.DB, env.DB, "org-a", "general", TTL, t0);
    await setGeneralPromptInD1("You answer in haiku (changed behind the isolate's back).");
    const within = await cachedTurnReads(env.DB, env.DB, "org-a", "general", TTL, t0 + TTL - 1);
    const after = await cachedTurnReads(env.DB, env.DB, "org-a", "general", TTL, t0 + TTL);
    expect(within.mode?.systemPrompt).toBe(first.mode?.systemPrompt);
    expect(after.mode?.systemPrompt).toBe("You answer in haiku (changed behind the isolate's back).");
  });

  it("reads D1 for every message when MODES_CACHE_MS is 0", async () => {
    await cachedTurnReads(env.DB, env.DB, "org-a", "general", 0, 5);
    await setGeneralPromptInD1("Zero means always read.");
    const next = await cachedTurnReads(env.DB, env.DB, "org-a", "general", 0, 5);
    expect(next.mode?.systemPrompt).toBe("Zero means always read.");
  });

  it("does not keep a mode it did not find, so a mode added elsewhere is found at once", async () => {
    const missing = await cachedTurnReads(env.DB, env.DB, "org-a", "added_later", TTL, 7);
    await env.DB.prepare(
      `INSERT INTO modes (id, key, display_name, description, system_prompt_summary, system_prompt, is_default, tools)
       SELECT 'add000000000000000000000000000ed', 'added_later', 'Added later', description, system_prompt_summary, system_prompt, 0, tools
       FROM modes WHERE key = 'general'`,
    ).run();
    const found = await cachedTurnReads(env.DB, env.DB, "org-a", "added_later", TTL, 8);
    expect(missing.mode).toBeNull();
    expect(found.mode?.displayName).toBe("Added later");
  });

  it("sends the next message with a mode edited through PUT /admin/modes in the same isolate", async () => {
    const before = await systemPromptOfTurn();
    const put = await exports.default.fetch("http://aptix.test/admin/modes/general", {
      method: "PUT",
      headers: { ...authHeaders(TEST_KEYS.operator.key), "content-type": "application/json" },
      body: JSON.stringify({
        displayName: "General Chat",
        description: "General conversation.",
        systemPrompt: "EDITED-BY-ADMIN: answer briefly.",
        tools: [],
        isDefault: true,
      }),
    });
    expect(put.status).toBe(200);
    const after = await systemPromptOfTurn();
    expect(before.prompt).not.toContain("EDITED-BY-ADMIN");
    expect(after.prompt).toContain("EDITED-BY-ADMIN: answer briefly.");
  });

  it("keeps the mode for a message without a bookmark, and reads it anew for one that sends its D1 bookmark", async () => {
    const first = await systemPromptOfTurn();
    await setGeneralPromptInD1("READ-AT-THE-BOOKMARK: a client that asks to see what it wrote.");
    const kept = await systemPromptOfTurn();
    const withBookmark = await systemPromptOfTurn({ "x-d1-bookmark": first.bookmark });
    expect(first.bookmark).not.toBe("");
    expect(kept.prompt).not.toContain("READ-AT-THE-BOOKMARK");
    expect(withBookmark.prompt).toContain("READ-AT-THE-BOOKMARK");
  });
});

/** Sends one message through POST /context/sessions/:id/messages; answers with the system prompt the upstream got. */
async function systemPromptOfContextTurn(headers: Record<string, string> = {}): Promise<string> {
  const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
  const all = { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", ...headers };
  const created = await exports.default.fetch("http://aptix.test/context/sessions", {
    method: "POST",
    headers: all,
    body: JSON.stringify({ mode: "general" }),
  });
  const { sessionId } = (await created.json()) as { sessionId: string };
  const sent = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
    method: "POST",
    headers: all,
    body: JSON.stringify({ content: `hi ${script.marker}` }),
  });
  expect(sent.status).toBe(200);
  const [system] = await script.messagesOf(0);
  return system?.content ?? "";
}

describe("the modes a session's turn keeps, through /context and the socket", () => {
  it("keeps the mode for a message without a bookmark, and reads it anew for one that sends its D1 bookmark", async () => {
    const first = await systemPromptOfContextTurn();
    const bookmark = (
      await exports.default.fetch("http://aptix.test/modes", { headers: authHeaders(TEST_KEYS.chat.key) })
    ).headers.get("x-d1-bookmark");
    await setGeneralPromptInD1("SEEN-WITH-A-BOOKMARK: the client reads its own writes.");
    const kept = await systemPromptOfContextTurn();
    const withBookmark = await systemPromptOfContextTurn({ "x-d1-bookmark": bookmark ?? "" });
    expect(kept).toBe(first);
    expect(withBookmark).toContain("SEEN-WITH-A-BOOKMARK");
  });
});

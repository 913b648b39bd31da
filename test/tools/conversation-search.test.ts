// conversation_search: the agent finds what the session's owner said in their other sessions, with the route's
// results and authorization (the owner's own sessions only), and a bad query is refused in words the model can use.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { memoryAccess } from "../../src/memory/memory-access";
import { forgetOrgMemoryPolicy, orgMemoryStatement } from "../../src/memory/memory-policy";
import { D1AgentModeCatalogService } from "../../src/modes/catalog-service";
import { conversationSearchTool } from "../../src/tools/conversation-search";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, sendMessage } from "../fixtures/sessions";
import { toolContext } from "../fixtures/tool-context";
import { scriptUpstream } from "../fixtures/upstream";

/** A word no other test writes. */
const word = (stem: string) => `${stem}${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;

/** A session of bob's (the chat key) in which he said `said`, once the search index has it. */
async function saidEarlier(said: string, topic: string): Promise<string> {
  const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
  const id = await createSession();
  await sendMessage(id, `${said} ${script.marker}`);
  // The index is written just after the turn ends, off the reply path.
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline) {
    const { json } = await call("GET", `/context/search?q=${topic}`);
    if ((json as { results: unknown[] }).results.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return id;
}

describe("conversation_search", () => {
  it("finds for the model what the same person said in another session, its match between « and »", async () => {
    const topic = word("gecko");
    const earlier = await saidEarlier(`We decided to ship ${topic} on Friday`, topic);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "conversation_search", arguments: JSON.stringify({ query: topic }) }] },
      { type: "completion", content: "You decided to ship it on Friday." },
    ]);
    const response = await sendMessage(await createSession(), `What did we decide about ${topic}? ${script.marker}`);
    expect(response.toolCalls[0]).toMatchObject({ name: "conversation_search", wasExecuted: true });
    const { results } = JSON.parse(response.toolCalls[0]?.resultJson ?? "") as {
      results: { sessionId: string; seq: number; role: string; snippet: string; title: string }[];
    };
    expect(results.map((r) => [r.sessionId, r.seq, r.role])).toEqual([[earlier, 1, "user"]]);
    expect(results[0]?.snippet).toContain(`ship «${topic}» on Friday`);
    expect(results[0]?.title).toContain(`We decided to ship ${topic}`);
  });

  it("searches the session owner's conversations only, never another person's", async () => {
    const topic = word("skink");
    await saidEarlier(`The ${topic} budget is settled`, topic);
    const tool = conversationSearchTool(env.DB);
    const asCarol = await tool.execute(
      JSON.stringify({ query: topic }),
      toolContext({ user: TEST_KEYS.otherMember.user }),
    );
    expect(JSON.parse(asCarol.result ?? "")).toEqual({ results: [] });
    const asBob = await tool.execute(JSON.stringify({ query: topic }), toolContext({ user: TEST_KEYS.chat.user }));
    expect((JSON.parse(asBob.result ?? "") as { results: unknown[] }).results).toHaveLength(1);
  });

  it("leaves out the session it runs in (its conversation is in the model's context already)", async () => {
    const topic = word("tuatara");
    const earlier = await saidEarlier(`The ${topic} plan`, topic);
    const tool = conversationSearchTool(env.DB);
    const context = toolContext({ user: TEST_KEYS.chat.user, sessionId: earlier });
    expect(JSON.parse((await tool.execute(JSON.stringify({ query: topic }), context)).result ?? "")).toEqual({
      results: [],
    });
  });

  it("refuses a blank or over-long query in words the model can act on", async () => {
    const tool = conversationSearchTool(env.DB);
    const blank = await tool.execute('{"query":"   "}', toolContext());
    const long = await tool.execute(JSON.stringify({ query: "a".repeat(201) }), toolContext());
    expect([blank.successful, long.successful]).toEqual([false, false]);
    expect(blank.errorMessage).toContain("ConversationSearchTool requires a non-empty 'query'");
    expect(long.errorMessage).toContain("at most 200 characters");
  });

  it("refuses, as the memory tools do, in an org whose memory is off", async () => {
    const org = `org-${crypto.randomUUID()}`;
    await orgMemoryStatement(env.DB, org, false).run();
    forgetOrgMemoryPolicy(env.DB);
    const catalog = new D1AgentModeCatalogService(env.DB, org);
    const tool = conversationSearchTool(env.DB, { memory: memoryAccess(env, env.DB), catalog });
    const result = await tool.execute(JSON.stringify({ query: "anything" }), toolContext({ org }));
    expect([result.successful, result.errorMessage]).toEqual([false, "Memory is off for this organization."]);
  });
});

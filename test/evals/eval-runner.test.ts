// The eval runner against the Worker (its own fetch): a case that passes and one that fails, each through a real
// turn in a throwaway session that is deleted after, with the turns' usage rows metered as `eval`; and the judge,
// scored by a scripted route that answers its JSON.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { EvalCase } from "../../src/evals/dataset";
import { EVAL_HEADER } from "../../src/evals/eval-http";
import { runEval } from "../../src/evals/runner";
import { TEST_KEYS } from "../fixtures/keys";
import { createSession, getSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const usage = { prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 };
const target = {
  baseUrl: "https://aptix.test",
  key: TEST_KEYS.admin.key,
  fetch: (input: Request | string | URL, init?: RequestInit) => exports.default.fetch(input, init),
};
const clock = () => {
  let t = 0;
  return () => (t += 5);
};

async function sessionsOf(user: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM session_index WHERE user_id = ?")
    .bind(user)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** The endpoints of the rows with `model`-less filter: the rows the upstream's usage made, once written. */
async function endpointsOfKey(keyId: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare("SELECT endpoint FROM usage_records WHERE key_id = ? ORDER BY created_at")
      .bind(keyId)
      .all<{ endpoint: string }>();
    if (results.length >= count || Date.now() > deadline) return results.map((r) => r.endpoint);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("runEval", () => {
  it("passes a case whose expectations hold, fails one that does not, and deletes their sessions", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }], usage },
      { type: "completion", content: "Hello, Dana!", usage },
      { type: "completion", content: "Goodbye.", usage },
    ]);
    const before = await sessionsOf(TEST_KEYS.admin.user);
    const cases: EvalCase[] = [
      {
        name: "greets",
        messages: [{ role: "user", content: `greet Dana ${script.marker}` }],
        expect: {
          contains: "Dana",
          tool_called: { name: "agent_hello_world", arguments: { name: "Dana" } },
          max_steps: 2,
        },
      },
      {
        name: "says hello",
        messages: [{ role: "user", content: `hello ${script.marker}` }],
        expect: { contains: "Hello", max_tokens: 10 },
      },
    ];
    const results = await runEval({ mode: "general", cases, target, now: clock() });
    expect(results).toMatchObject({ mode: "general", passed: 1, failed: 1, passRate: 0.5 });
    expect(results.cases).toEqual([
      { name: "greets", passed: true, failures: [], steps: 2, tokens: 32, ms: 5 },
      {
        name: "says hello",
        passed: false,
        failures: ['contains: "Hello" is not in the answer', "max_tokens: 16 tokens, more than 10"],
        steps: 1,
        tokens: 16,
        ms: 5,
      },
    ]);
    expect(await sessionsOf(TEST_KEYS.admin.user)).toBe(before);
    expect(await endpointsOfKey("admin", 3)).toEqual(["eval", "eval", "eval"]);
  });

  it("keeps the judge's score and reason, failing under min_score", async () => {
    const verdict = (score: number, reason: string) => ({
      type: "completion" as const,
      content: JSON.stringify({ score, reason }),
      usage,
    });
    const script = await scriptUpstream([
      { type: "completion", content: "Paris is the capital of France.", usage },
      verdict(0.9, "Correct and brief."),
      { type: "completion", content: "It is Lyon.", usage },
      verdict(0.1, "Lyon is wrong."),
    ]);
    const judged = (name: string): EvalCase => ({
      name,
      messages: [{ role: "user", content: `capital of France? ${script.marker}` }],
      expect: { judge: { rubric: "Names Paris as the capital.", min_score: 0.8 } },
    });
    const results = await runEval({ mode: "general", cases: [judged("right"), judged("wrong")], target });
    expect(results.cases.map(({ name, passed, failures, judge }) => ({ name, passed, failures, judge }))).toEqual([
      {
        name: "right",
        passed: true,
        failures: [],
        judge: { score: 0.9, reason: "Correct and brief.", route: "default" },
      },
      {
        name: "wrong",
        passed: false,
        failures: ["judge: score 0.1 under 0.8: Lyon is wrong."],
        judge: { score: 0.1, reason: "Lyon is wrong.", route: "default" },
      },
    ]);
    const judgeRequest = (await script.bodies())[1];
    expect(judgeRequest?.messages).toMatchObject([
      { role: "system" },
      { role: "user", content: expect.stringContaining("The agent's last answer:\nParis is the capital of France.") },
    ]);
  });

  it("refuses the eval header from a key that is not an org admin's, running no turn", async () => {
    const sessionId = await createSession();
    const response = await exports.default.fetch(`https://aptix.test/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TEST_KEYS.chat.key}`,
        "content-type": "application/json",
        [EVAL_HEADER]: "1",
      },
      body: JSON.stringify({ content: "hello" }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: "insufficient_scope", param: EVAL_HEADER } });
    expect((await getSession(sessionId)).turns).toEqual([]);
  });
});

// Every guardrail decision on a turn is recorded: an instant on the turn's timeline (never the matched text), and a
// count per guardrail, point and action in the org's counters (written after the reply).
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { decisions, EMAIL, one, setOrgGuardrails, timeline } from "./turn-setup";

// The org's list is kept per isolate: the file leaves none behind for another file the isolate may run.
afterAll(() => setOrgGuardrails([]));

interface CountRow {
  guardrail: string;
  point: string;
  action: string;
  count: number;
}

/** The org's counter rows once they add up to `total` decisions: the object writes them after its reply. */
async function countRows(total: number): Promise<CountRow[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare(
      "SELECT guardrail, point, action, count FROM guardrail_counts WHERE org = 'org-a' ORDER BY point, guardrail",
    ).all<CountRow>();
    const sum = results.reduce((n, r) => n + r.count, 0);
    if (sum >= total || Date.now() > deadline) return results;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a turn's guardrail decisions", () => {
  it("are on its timeline in the order they fired, with what was found and never the text", async () => {
    await setOrgGuardrails([
      one("pii", "input", "mask", { name: "mail_in" }),
      one("deny", "output", "flag", { name: "watch", words: ["today"] }),
    ]);
    const script = await scriptUpstream([{ type: "completion", content: "Mail [EMAIL_1] today." }]);
    const sessionId = await createSession();
    await sendMessage(sessionId, `mail ${EMAIL} ${script.marker}`);
    const turnId = (await getSession(sessionId)).turns[0]?.turnId ?? "";
    const view = await timeline(sessionId, turnId);
    expect(decisions(view)).toEqual([
      { guardrail: "mail_in", point: "input", action: "mask", found: ["email"] },
      { guardrail: "watch", point: "output", action: "flag", found: ["deny"] },
    ]);
    expect(JSON.stringify(view)).not.toContain(EMAIL);
  });

  it("are counted per guardrail, point and action in the org's counters", async () => {
    await setOrgGuardrails([one("pii", "input", "flag", { name: "counted" })]);
    const script = await scriptUpstream([
      { type: "completion", content: "one" },
      { type: "completion", content: "two" },
    ]);
    const sessionId = await createSession();
    await sendMessage(sessionId, `mail ${EMAIL} ${script.marker}`);
    await sendMessage(sessionId, `again ${EMAIL} ${script.marker}`);
    const rows = await countRows(2);
    expect(rows.filter((r) => r.guardrail === "counted")).toEqual([
      { guardrail: "counted", point: "input", action: "flag", count: 2 },
    ]);
  });
});

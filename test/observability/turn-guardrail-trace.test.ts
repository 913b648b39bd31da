// A guardrail's decision on a turn is an event of the turn's run span (`invoke_agent`): the guardrail, the point,
// the action and the kinds found, never the matched text.
import { exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { callAs, createSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { newTrace, spansOfTrace } from "./spans";

const putGuardrails = (guardrails: unknown[]) =>
  callAs(TEST_KEYS.admin.key, "PUT", "/admin/guardrails", { guardrails, passthrough: false });

// The org's list is kept per isolate: the file leaves none behind for another file the isolate may run.
afterAll(() => putGuardrails([]));

describe("a turn's trace", () => {
  it("carries each guardrail decision as a `guardrail` event of its run span", async () => {
    const put = await putGuardrails([{ kind: "pii", points: ["input"], action: "mask", entities: ["email"] }]);
    expect(put.status).toBe(200);
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession();
    const trace = newTrace();
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: {
        ...authHeaders(TEST_KEYS.chat.key),
        "content-type": "application/json",
        traceparent: trace.traceparent,
      },
      body: JSON.stringify({ content: `mail dana@example.com ${script.marker}` }),
    });
    expect(response.status).toBe(200);
    const spans = await spansOfTrace(trace.traceId, {
      until: (found) => found.some((s) => s.events.some((e) => e.name === "guardrail")),
    });
    const events = spans.flatMap((s) => s.events.filter((e) => e.name === "guardrail").map((e) => e.attributes));
    expect(events).toEqual([
      {
        "aptix.guardrail.name": "pii",
        "aptix.guardrail.point": "input",
        "aptix.guardrail.action": "mask",
        "aptix.guardrail.found": "email",
      },
    ]);
  });
});

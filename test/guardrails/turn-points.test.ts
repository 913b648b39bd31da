// The guardrails on an agent turn over REST: each point (the message, the answer, a tool call's arguments, a tool's
// result) with each action, checked on what the scripted upstream was sent and what the session stored and answered;
// and the records of each decision: an instant on the turn's timeline (never the matched text), a count per
// guardrail, point and action in the org's counters (written after the reply).
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { call, createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { decisions, EMAIL, one, sentText, setOrgGuardrails, timeline } from "./turn-setup";

// The org's list is kept per isolate: the file leaves none behind for another file the isolate may run.
afterAll(() => setOrgGuardrails([]));

const greet = (name: string) => ({
  type: "completion" as const,
  toolCalls: [{ name: "agent_hello_world", arguments: JSON.stringify({ name }) }],
});

describe("an input guardrail", () => {
  it("that blocks refuses the message with guardrail_blocked, sends nothing upstream and stores only the refusal", async () => {
    await setOrgGuardrails([one("pii", "input", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never sent" }]);
    const sessionId = await createSession();
    const { status, json } = await call("POST", `/context/sessions/${sessionId}/messages`, {
      content: `write to ${EMAIL} ${script.marker}`,
    });
    const error = (json as { error: { code: string; message: string; param: string | null } }).error;
    const view = await getSession(sessionId);
    const turn = view.turns[0];
    expect({ status, code: error.code, names: error.message.includes('"pii"') }).toEqual({
      status: 400,
      code: "guardrail_blocked",
      names: true,
    });
    expect(await script.bodies()).toEqual([]);
    expect(view.conversation).toEqual([]);
    expect(view.turns.map((t) => ({ status: t.status, code: t.error?.code }))).toEqual([
      { status: "failed", code: "guardrail_blocked" },
    ]);
    expect(decisions(await timeline(sessionId, turn?.turnId ?? ""))).toEqual([
      { guardrail: "pii", point: "input", action: "block", found: ["email"] },
    ]);
    expect(JSON.stringify(view)).not.toContain(EMAIL);
  });

  it("that redacts stores and sends the message with placeholders", async () => {
    await setOrgGuardrails([one("pii", "input", "redact")]);
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession();
    await sendMessage(sessionId, `write to ${EMAIL} ${script.marker}`);
    const stored = (await getSession(sessionId)).conversation[0]?.content ?? "";
    expect({ sent: (await sentText(script)).includes(EMAIL), stored }).toEqual({
      sent: false,
      stored: `write to [EMAIL_1] ${script.marker}`,
    });
  });

  it("that masks sends placeholders and restores them in the answer and the stored message, turn after turn", async () => {
    await setOrgGuardrails([one("pii", "input", "mask")]);
    const script = await scriptUpstream([
      { type: "completion", content: "I will write to [EMAIL_1]." },
      { type: "completion", content: "Still [EMAIL_1]." },
    ]);
    const sessionId = await createSession();
    const first = await sendMessage(sessionId, `write to ${EMAIL} ${script.marker}`);
    const second = await sendMessage(sessionId, `and again ${script.marker}`);
    const [user] = await script.messagesOf(0).then((m) => m.filter((x) => x.role === "user"));
    const view = await getSession(sessionId);
    expect([first.text, second.text]).toEqual([`I will write to ${EMAIL}.`, `Still ${EMAIL}.`]);
    expect(user?.content).toBe(`write to [EMAIL_1] ${script.marker}`);
    expect((await sentText(script)).includes(EMAIL)).toBe(false);
    expect(view.conversation.map((m) => m.content)).toEqual([
      `write to ${EMAIL} ${script.marker}`,
      `I will write to ${EMAIL}.`,
      `and again ${script.marker}`,
      `Still ${EMAIL}.`,
    ]);
  });

  it("that flags lets the message through unchanged and records the decision", async () => {
    await setOrgGuardrails([one("pii", "input", "flag")]);
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession();
    await sendMessage(sessionId, `write to ${EMAIL} ${script.marker}`);
    const turnId = (await getSession(sessionId)).turns[0]?.turnId ?? "";
    expect((await sentText(script)).includes(EMAIL)).toBe(true);
    expect(decisions(await timeline(sessionId, turnId))).toEqual([
      { guardrail: "pii", point: "input", action: "flag", found: ["email"] },
    ]);
  });
});

describe("an output guardrail", () => {
  it("that blocks fails the turn with guardrail_blocked and stores no answer", async () => {
    await setOrgGuardrails([one("pii", "output", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: `Mail ${EMAIL}.` }]);
    const sessionId = await createSession();
    const answer = await sendMessage(sessionId, `who? ${script.marker}`);
    const view = await getSession(sessionId);
    expect({ status: answer.status, code: answer.error?.code, text: answer.text }).toEqual({
      status: "failed",
      code: "guardrail_blocked",
      text: "",
    });
    expect(view.conversation.map((m) => m.role)).toEqual(["user"]);
    expect(JSON.stringify(view)).not.toContain(EMAIL);
  });

  it("that redacts answers and stores the answer with placeholders", async () => {
    await setOrgGuardrails([one("pii", "output", "redact")]);
    const script = await scriptUpstream([{ type: "completion", content: `Mail ${EMAIL}.` }]);
    const sessionId = await createSession();
    const answer = await sendMessage(sessionId, `who? ${script.marker}`);
    const stored = (await getSession(sessionId)).conversation.at(-1)?.content;
    expect([answer.text, stored]).toEqual(["Mail [EMAIL_1].", "Mail [EMAIL_1]."]);
  });

  it("that flags answers unchanged and records the decision", async () => {
    await setOrgGuardrails([one("pii", "output", "flag")]);
    const script = await scriptUpstream([{ type: "completion", content: `Mail ${EMAIL}.` }]);
    const sessionId = await createSession();
    const answer = await sendMessage(sessionId, `who? ${script.marker}`);
    const turnId = (await getSession(sessionId)).turns[0]?.turnId ?? "";
    expect(answer.text).toBe(`Mail ${EMAIL}.`);
    expect(decisions(await timeline(sessionId, turnId))).toEqual([
      { guardrail: "pii", point: "output", action: "flag", found: ["email"] },
    ]);
  });
});

/** The greeting tool's call and result in a turn's answer, and the tool message the model read next. */
async function greetTurn(name: string): Promise<{ answer: AgentExecuteResponse; toolMessage: string; sent: string }> {
  const script = await scriptUpstream([greet(name), { type: "completion", content: "Done." }]);
  const sessionId = await createSession();
  const answer = await sendMessage(sessionId, `greet ${script.marker}`);
  const second = await script.messagesOf(1);
  return {
    answer,
    toolMessage: second.find((m) => m.role === "tool")?.content ?? "",
    sent: await sentText(script),
  };
}

describe("a tool_call guardrail", () => {
  it("that blocks refuses the call before it runs; the model is told and the turn goes on", async () => {
    await setOrgGuardrails([one("deny", "tool_call", "block", { name: "no_dana", words: ["Dana"] })]);
    const { answer, toolMessage } = await greetTurn("Dana");
    const [callMade] = answer.toolCalls;
    expect({ status: answer.status, ran: callMade?.wasExecuted, result: callMade?.resultJson }).toEqual({
      status: "completed",
      ran: false,
      result: null,
    });
    expect([callMade?.errorMessage?.includes('"no_dana"'), toolMessage.includes("no_dana")]).toEqual([true, true]);
  });

  it("that redacts runs the call with placeholders in its arguments", async () => {
    await setOrgGuardrails([one("pii", "tool_call", "redact")]);
    const { answer } = await greetTurn(EMAIL);
    expect(JSON.parse(answer.toolCalls[0]?.resultJson ?? "{}").message).toBe("Hello, [EMAIL_1]! Welcome to Aptix.");
  });

  it("that flags runs the call as it came", async () => {
    await setOrgGuardrails([one("pii", "tool_call", "flag")]);
    const { answer } = await greetTurn(EMAIL);
    expect(JSON.parse(answer.toolCalls[0]?.resultJson ?? "{}").message).toBe(`Hello, ${EMAIL}! Welcome to Aptix.`);
  });
});

describe("a tool_result guardrail", () => {
  it("that blocks gives the model a refusal in place of the result", async () => {
    await setOrgGuardrails([one("deny", "tool_result", "block", { name: "no_welcome", words: ["welcome"] })]);
    const { toolMessage } = await greetTurn("Dana");
    expect([toolMessage.includes("no_welcome"), toolMessage.includes("Welcome to Aptix")]).toEqual([true, false]);
  });

  it("that redacts stores and sends the result with placeholders", async () => {
    await setOrgGuardrails([one("pii", "tool_result", "redact")]);
    const { answer, sent } = await greetTurn(EMAIL);
    expect(JSON.parse(answer.toolCalls[0]?.resultJson ?? "{}").message).toBe("Hello, [EMAIL_1]! Welcome to Aptix.");
    expect(sent.split(EMAIL).length - 1).toBe(1);
  });

  it("that masks keeps the result whole for the person and sends the model placeholders", async () => {
    await setOrgGuardrails([one("pii", "tool_result", "mask")]);
    const { answer, toolMessage } = await greetTurn(EMAIL);
    expect(JSON.parse(answer.toolCalls[0]?.resultJson ?? "{}").message).toBe(`Hello, ${EMAIL}! Welcome to Aptix.`);
    expect(JSON.parse(toolMessage).message).toBe("Hello, [EMAIL_1]! Welcome to Aptix.");
  });
});

describe("a masked value", () => {
  it("is restored in a tool call's arguments before the tool runs, and the model still never reads it", async () => {
    await setOrgGuardrails([one("pii", "input", "mask")]);
    const script = await scriptUpstream([greet("[EMAIL_1]"), { type: "completion", content: "Greeted [EMAIL_1]." }]);
    const sessionId = await createSession();
    const answer = await sendMessage(sessionId, `greet ${EMAIL} ${script.marker}`);
    expect(JSON.parse(answer.toolCalls[0]?.resultJson ?? "{}").message).toBe(`Hello, ${EMAIL}! Welcome to Aptix.`);
    expect(answer.text).toBe(`Greeted ${EMAIL}.`);
    expect((await sentText(script)).includes(EMAIL)).toBe(false);
  });
});

interface CountRow {
  guardrail: string;
  point: string;
  action: string;
  count: number;
}

/**
 * The org's counter rows of `guardrail` once they add up to `total` decisions: the object writes them after its reply
 * (an earlier test's guardrails of the same org have rows of their own, which must not end the wait).
 */
async function countRows(guardrail: string, total: number): Promise<CountRow[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare(
      "SELECT guardrail, point, action, count FROM guardrail_counts WHERE org = 'org-a' AND guardrail = ? ORDER BY point",
    )
      .bind(guardrail)
      .all<CountRow>();
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
    expect(await countRows("counted", 2)).toEqual([{ guardrail: "counted", point: "input", action: "flag", count: 2 }]);
  });
});

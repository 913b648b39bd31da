// /admin/guardrails and a mode's guardrails through the admin modes API: written, read back with defaults, audited,
// counted, each org's its own, and a bad list refused naming the entry and field, changing nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { GuardrailDecision } from "../../src/guardrails/guardrail-check";
import { recordGuardrailDecisions } from "../../src/guardrails/guardrail-counts";
import { TEST_KEYS } from "../fixtures/keys";
import { callAs } from "../fixtures/sessions";
import { newChatKey } from "../passthrough/harness";

/** An admin of an org of its own (what one test writes, no other file reads). */
async function newAdmin(): Promise<{ key: string; org: string }> {
  const { key, org } = await newChatKey(`org-guard-${crypto.randomUUID()}`, ["chat", "admin"]);
  return { key, org };
}

const PII_MASK = { kind: "pii", points: ["input", "tool_result"], action: "mask" };
const DENY = { name: "codenames", kind: "deny", points: ["output"], action: "block", words: ["falcon"] };

const errorOf = (answer: { body: Record<string, unknown> }) =>
  answer.body.error as { code: string; param: string | null; message: string };

describe("/admin/guardrails", () => {
  it("writes the org's list and switch, reads them back named, and audits the change", async () => {
    const { key } = await newAdmin();
    expect(await callAs(key, "GET", "/admin/guardrails")).toEqual({
      status: 200,
      body: { guardrails: [], passthrough: false, counts: [] },
    });
    const put = await callAs(key, "PUT", "/admin/guardrails", { guardrails: [PII_MASK, DENY], passthrough: true });
    const written = { guardrails: [{ name: "pii", ...PII_MASK }, DENY], passthrough: true, counts: [] };
    expect(put).toEqual({ status: 200, body: written });
    expect(await callAs(key, "GET", "/admin/guardrails")).toEqual({ status: 200, body: written });
    const audit = await callAs(key, "GET", "/admin/audit?limit=1");
    expect((audit.body.entries as unknown[])[0]).toMatchObject({
      action: "guardrails.put",
      target: "guardrails",
      before: null,
      after: { guardrails: written.guardrails, passthrough: true },
    });
  });

  it("refuses a bad list with 400 invalid_guardrail naming the entry and field, changing nothing", async () => {
    const { key } = await newAdmin();
    await callAs(key, "PUT", "/admin/guardrails", { guardrails: [PII_MASK] });
    const bad = { kind: "deny", points: ["input"], action: "block", patterns: ["fine", "[unclosed"] };
    const refused = await callAs(key, "PUT", "/admin/guardrails", { guardrails: [PII_MASK, bad] });
    expect(refused.status).toBe(400);
    expect(errorOf(refused)).toMatchObject({ code: "invalid_guardrail", param: "guardrails[1].patterns[1]" });
    expect((await callAs(key, "GET", "/admin/guardrails")).body.guardrails).toEqual([{ name: "pii", ...PII_MASK }]);
  });

  it("shows the org's counters and no other org's, and another org's admin sees their own list", async () => {
    const first = await newAdmin();
    const second = await newAdmin();
    await callAs(first.key, "PUT", "/admin/guardrails", { guardrails: [DENY] });
    const work: Promise<unknown>[] = [];
    const decision: GuardrailDecision = {
      guardrail: "codenames",
      kind: "deny",
      point: "output",
      action: "block",
      found: ["deny"],
    };
    recordGuardrailDecisions(env, env.DB, first.org, [decision, decision], (p) => work.push(p));
    await Promise.all(work);
    const counts = (await callAs(first.key, "GET", "/admin/guardrails")).body.counts;
    expect(counts).toEqual([
      { guardrail: "codenames", point: "output", action: "block", count: 2, lastAt: expect.any(String) },
    ]);
    expect(await callAs(second.key, "GET", "/admin/guardrails")).toEqual({
      status: 200,
      body: { guardrails: [], passthrough: false, counts: [] },
    });
  });

  it("is an admin's: a member is refused with 403", async () => {
    const refused = await callAs(TEST_KEYS.chat.key, "PUT", "/admin/guardrails", { guardrails: [] });
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe("insufficient_scope");
  });
});

describe("a mode's guardrails", () => {
  it("are written and read back through the admin modes API", async () => {
    const { key } = await newAdmin();
    const mode = { displayName: "Careful", description: "Masks personal data.", systemPrompt: "Be careful." };
    const put = await callAs(key, "PUT", "/admin/modes/careful", { ...mode, guardrails: [PII_MASK] });
    expect(put.status).toBe(201);
    expect(put.body.mode).toMatchObject({ key: "careful", guardrails: [{ name: "pii", ...PII_MASK }] });
    const listed = (await callAs(key, "GET", "/admin/modes")).body.modes as { key: string; guardrails: unknown }[];
    expect(listed.find((m) => m.key === "careful")?.guardrails).toEqual([{ name: "pii", ...PII_MASK }]);
  });

  it("refuses mask on output with 400 invalid_guardrail, writing no mode", async () => {
    const { key } = await newAdmin();
    const mode = { displayName: "Bad", description: "Masks the answer.", systemPrompt: "Hi." };
    const masked = { kind: "pii", points: ["output"], action: "mask" };
    const refused = await callAs(key, "PUT", "/admin/modes/bad", { ...mode, guardrails: [masked] });
    expect(refused.status).toBe(400);
    expect(errorOf(refused)).toMatchObject({ code: "invalid_guardrail", param: "guardrails[0].points[0]" });
    const listed = (await callAs(key, "GET", "/admin/modes")).body.modes as { key: string }[];
    expect(listed.some((m) => m.key === "bad")).toBe(false);
  });
});

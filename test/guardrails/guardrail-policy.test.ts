// Which guardrails run (src/guardrails/guardrail-policy.ts) and the counters of what fired (guardrail-counts.ts),
// against the real D1 of the test runtime.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { GuardrailDecision } from "../../src/guardrails/guardrail-check";
import { type Guardrail, parseGuardrails } from "../../src/guardrails/guardrail-config";
import { guardrailCounts, recordGuardrailDecisions } from "../../src/guardrails/guardrail-counts";
import {
  effectiveGuardrails,
  forgetOrgGuardrails,
  mergeGuardrails,
  orgGuardrailsStatement,
} from "../../src/guardrails/guardrail-policy";

function list(value: unknown): Guardrail[] {
  const outcome = parseGuardrails(value, "guardrails");
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.value;
}

const ORG_LIST = list([
  { kind: "pii", points: ["input", "output", "tool_result"], action: "redact" },
  { kind: "secrets", points: ["tool_call"], action: "block" },
  { kind: "deny", points: ["output"], action: "flag", words: ["falcon"] },
]);

async function writeOrg(org: string, guardrails: Guardrail[], passthrough: boolean): Promise<void> {
  await orgGuardrailsStatement(env.DB, org, guardrails, passthrough).run();
  forgetOrgGuardrails(env.DB);
}

describe("effectiveGuardrails", () => {
  it("puts a mode's entry in place of the org's of the same name, and the mode's others after", () => {
    const mode = list([
      { name: "extra", kind: "max_tokens", points: ["input"], action: "block", maxTokens: 10 },
      { name: "pii", kind: "pii", points: ["input"], action: "block" },
    ]);
    const merged = mergeGuardrails(ORG_LIST, mode);
    expect(merged.map((g) => [g.name, g.action])).toEqual([
      ["pii", "block"],
      ["secrets", "block"],
      ["deny", "flag"],
      ["extra", "block"],
    ]);
  });

  it("gives a turn the org's list under its mode's", async () => {
    const org = `org-gr-${crypto.randomUUID()}`;
    await writeOrg(org, ORG_LIST, false);
    const mode = {
      guardrails: list([{ name: "deny", kind: "deny", points: ["input"], action: "block", words: ["x"] }]),
    };
    const effective = await effectiveGuardrails(env, env.DB, org, mode);
    expect(effective.map((g) => [g.name, g.points])).toEqual([
      ["pii", ["input", "output", "tool_result"]],
      ["secrets", ["tool_call"]],
      ["deny", ["input"]],
    ]);
  });

  it("gives the passthrough nothing until the org turns it on, then its input and output entries alone", async () => {
    const org = `org-gr-${crypto.randomUUID()}`;
    await writeOrg(org, ORG_LIST, false);
    expect(await effectiveGuardrails(env, env.DB, org, null)).toEqual([]);
    await writeOrg(org, ORG_LIST, true);
    const passthrough = await effectiveGuardrails(env, env.DB, org, null);
    expect(passthrough.map((g) => [g.name, g.points])).toEqual([
      ["pii", ["input", "output"]],
      ["deny", ["output"]],
    ]);
  });

  it("gives an org that wrote nothing its mode's list alone", async () => {
    const mode = { guardrails: ORG_LIST.slice(0, 1) };
    expect(await effectiveGuardrails(env, env.DB, `org-gr-${crypto.randomUUID()}`, mode)).toEqual(mode.guardrails);
  });
});

describe("recordGuardrailDecisions", () => {
  it("adds each decision to its guardrail, point and action's counter, and writes nothing for none", async () => {
    const org = `org-gr-${crypto.randomUUID()}`;
    const work: Promise<unknown>[] = [];
    const waitUntil = (p: Promise<unknown>) => work.push(p);
    const decision = (action: GuardrailDecision["action"]): GuardrailDecision => ({
      guardrail: "pii",
      kind: "pii",
      point: "input",
      action,
      found: ["email"],
    });
    recordGuardrailDecisions(env, env.DB, org, [decision("mask"), decision("mask"), decision("block")], waitUntil);
    recordGuardrailDecisions(env, env.DB, org, [decision("mask")], waitUntil);
    recordGuardrailDecisions(env, env.DB, org, [], waitUntil);
    await Promise.all(work);
    expect(work).toHaveLength(2);
    const counts = await guardrailCounts(env.DB, org);
    expect(counts.map((c) => [c.guardrail, c.point, c.action, c.count]).sort()).toEqual([
      ["pii", "input", "block", 1],
      ["pii", "input", "mask", 3],
    ]);
    expect(await guardrailCounts(env.DB, `${org}-other`)).toEqual([]);
  });
});

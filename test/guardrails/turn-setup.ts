// Helpers of the turn guardrail tests: the org's guardrails set through the admin API (they apply to every mode of
// the org), a turn's timeline, and every text the scripted upstream was sent.
import { expect } from "vitest";
import type { TurnTimeline } from "../../src/wire/timeline";
import { TEST_KEYS } from "../fixtures/keys";
import { callAs } from "../fixtures/sessions";
import type { UpstreamScript } from "../fixtures/upstream";

/** A value of each kind the tests hide: an email address. */
export const EMAIL = "dana.smith@example.com";

/** Replaces the org's guardrails (org-a, the test keys' org) with `guardrails`; the passthrough's stay off. */
export async function setOrgGuardrails(guardrails: unknown[]): Promise<void> {
  const { status, body } = await callAs(TEST_KEYS.admin.key, "PUT", "/admin/guardrails", {
    guardrails,
    passthrough: false,
  });
  expect(status, JSON.stringify(body)).toBe(200);
}

/** One guardrail of `kind` on one point with one action (pii: emails only). */
export function one(kind: "pii" | "deny", point: string, action: string, extra: Record<string, unknown> = {}) {
  return { kind, points: [point], action, ...(kind === "pii" ? { entities: ["email"] } : {}), ...extra };
}

/** Everything the upstream received from the script's requests, as one text. */
export async function sentText(script: UpstreamScript): Promise<string> {
  return JSON.stringify(await script.bodies());
}

export async function timeline(sessionId: string, turnId: string): Promise<TurnTimeline> {
  const { status, body } = await callAs(
    TEST_KEYS.chat.key,
    "GET",
    `/context/sessions/${sessionId}/turns/${turnId}/timeline`,
  );
  expect(status, JSON.stringify(body)).toBe(200);
  return body as unknown as TurnTimeline;
}

/** The guardrail steps of a timeline, as decisions. */
export function decisions(view: TurnTimeline) {
  return view.steps
    .filter((s) => s.kind === "guardrail")
    .map(({ guardrail, point, action, found }) => ({ guardrail, point, action, found }));
}

// The passthrough's guardrails in tests: an org of its own whose admin turns guardrails on through the admin API
// (PUT /admin/guardrails), a chat key of that org, and the counters its requests left.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { BASE_URL, newChatKey, type TestKey, type TestWorker, workerWith } from "./harness";

/** An address the `pii` guardrail finds, and the placeholder it gets first. */
export const EMAIL = "ada.lovelace@example.com";
export const EMAIL_PLACEHOLDER = "[EMAIL_1]";

/** One entry as an admin writes it. */
export type Entry = Record<string, unknown>;

export interface GuardedOrg {
  key: TestKey;
  /** A worker whose after-the-answer work (the counters) a test can wait for. */
  through: TestWorker;
}

/** A fresh org with `guardrails` saved by its admin, applied to the passthrough unless `passthrough` is false. */
export async function guardedOrg(guardrails: Entry[], passthrough = true): Promise<GuardedOrg> {
  const org = `org-guard-${crypto.randomUUID()}`;
  const admin = await newChatKey(org, ["chat", "admin"]);
  const through = workerWith();
  const put = await through.fetch(`${new URL(BASE_URL).origin}/admin/guardrails`, {
    method: "PUT",
    headers: { authorization: `Bearer ${admin.key}`, "content-type": "application/json" },
    body: JSON.stringify({ guardrails, passthrough }),
  });
  expect(put.status).toBe(200);
  return { key: await newChatKey(org), through };
}

/** Only emails: the scripts' markers hold digits a phone number's pattern could read. */
export const piiEmail = (action: string, points: string[] = ["input"]): Entry => ({
  kind: "pii",
  entities: ["email"],
  points,
  action,
});

export interface CountRow {
  guardrail: string;
  point: string;
  action: string;
  count: number;
}

/** The org's guardrail counters once the worker's after-the-answer work is done. */
export async function countsOf(guarded: GuardedOrg): Promise<CountRow[]> {
  await guarded.through.settled();
  const { results } = await env.DB.prepare(
    "SELECT guardrail, point, action, count FROM guardrail_counts WHERE org = ? ORDER BY point, guardrail",
  )
    .bind(guarded.key.org)
    .all<CountRow>();
  return results;
}

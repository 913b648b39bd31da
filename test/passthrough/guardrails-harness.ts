// The passthrough's guardrails in tests: an org of its own with guardrails on (as its admin saves them), a chat key
// of that org, and the counters its requests left.
import { env } from "cloudflare:workers";
import { parseGuardrails } from "../../src/guardrails/guardrail-config";
import { newChatKey, type TestKey, type TestWorker, worker, workerWith } from "./harness";

/** An address the `pii` guardrail finds, and the placeholder it gets first. */
export const EMAIL = "ada.lovelace@example.com";
export const EMAIL_PLACEHOLDER = "[EMAIL_1]";

/** One entry as an admin writes it. */
export type Entry = Record<string, unknown>;

export interface GuardedOrg {
  key: TestKey;
  /** The worker the test calls: with `counted`, one whose after-the-answer work (the counters) it can wait for. */
  through: TestWorker;
}

let counting: TestWorker | undefined;

/**
 * A fresh org with `guardrails` saved as PUT /admin/guardrails saves them (parsed, in `org_guardrails`), applied to
 * the passthrough unless `passthrough` is false.
 */
export async function guardedOrg(
  guardrails: Entry[],
  options: { passthrough?: boolean; counted?: boolean } = {},
): Promise<GuardedOrg> {
  const { passthrough = true, counted = false } = options;
  const org = `org-guard-${crypto.randomUUID()}`;
  const parsed = parseGuardrails(guardrails, "guardrails");
  if (!parsed.ok) throw new Error(`${parsed.param}: ${parsed.message}`);
  await env.DB.prepare("INSERT INTO org_guardrails (org, guardrails, passthrough) VALUES (?, ?, ?)")
    .bind(org, JSON.stringify(parsed.value), passthrough ? 1 : 0)
    .run();
  // The deployed entry point, unless the test reads the counters written after the answer (an app whose work after
  // the answer it can wait for: one for the file, as a new one pays for its first requests again).
  counting ??= workerWith();
  return { key: await newChatKey(org), through: counted ? counting : worker };
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

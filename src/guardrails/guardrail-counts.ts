// A counter per guardrail, point and action for each org (what fired, never what it matched), shown on the admin
// page (GET /admin/guardrails). Written off the reply's path: the turn and the passthrough hand the write to their
// waitUntil, so a guardrail that fires costs the person no D1 round trip. The one module with its SQL.
import { z } from "zod";
import type { Db } from "../db";
import { type AdminLogger, JsonAdminLogger } from "../observability/admin-logger";
import type { GuardrailDecision } from "./guardrail-check";
import type { GuardrailAction, GuardrailPoint } from "./guardrail-config";

export const GuardrailCount = z
  .object({
    guardrail: z.string(),
    point: z.enum(["input", "output", "tool_call", "tool_result"]),
    action: z.enum(["block", "redact", "mask", "flag"]),
    count: z.number().int(),
    lastAt: z.string(),
  })
  .meta({ id: "GuardrailCount" });
export type GuardrailCount = z.infer<typeof GuardrailCount>;

/** The decisions summed by guardrail, point and action. */
function tally(decisions: readonly GuardrailDecision[]): Map<string, { d: GuardrailDecision; n: number }> {
  const out = new Map<string, { d: GuardrailDecision; n: number }>();
  for (const d of decisions) {
    const key = `${d.guardrail}\u0000${d.point}\u0000${d.action}`;
    const seen = out.get(key);
    if (seen) seen.n += 1;
    else out.set(key, { d, n: 1 });
  }
  return out;
}

/** Adds `decisions` to the org's counters (one batch), its write handed to `waitUntil`; nothing when there are none. */
export function recordGuardrailDecisions(
  _env: Cloudflare.Env,
  db: Db,
  org: string,
  decisions: readonly GuardrailDecision[],
  waitUntil: (work: Promise<unknown>) => void,
  logger: AdminLogger = new JsonAdminLogger(),
): void {
  if (decisions.length === 0) return;
  const now = new Date().toISOString();
  const upsert = db.prepare(
    `INSERT INTO guardrail_counts (org, guardrail, point, action, count, last_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (org, guardrail, point, action) DO UPDATE SET count = count + ?5, last_at = ?6`,
  );
  const statements = [...tally(decisions).values()].map(({ d, n }) =>
    upsert.bind(org, d.guardrail, d.point, d.action, n, now),
  );
  waitUntil(db.batch(statements).catch((error: unknown) => logger.addException("[Guardrail_CountsUnwritten]", error)));
}

const CountRow = z.object({
  guardrail: z.string(),
  point: z.enum(["input", "output", "tool_call", "tool_result"] satisfies GuardrailPoint[]),
  action: z.enum(["block", "redact", "mask", "flag"] satisfies GuardrailAction[]),
  count: z.number(),
  last_at: z.string(),
});

/** The org's counters, most recent first. */
export async function guardrailCounts(db: Db, org: string): Promise<GuardrailCount[]> {
  const { results } = await db
    .prepare(
      `SELECT guardrail, point, action, count, last_at FROM guardrail_counts WHERE org = ?
       ORDER BY last_at DESC, guardrail, point, action LIMIT 500`,
    )
    .bind(org)
    .all();
  return results.map((row) => {
    const r = CountRow.parse(row);
    return { guardrail: r.guardrail, point: r.point, action: r.action, count: r.count, lastAt: r.last_at };
  });
}

// Which guardrails a turn or a passthrough call runs: the org's list (PUT /admin/guardrails) under the mode's own
// (an entry of the mode with the same name replaces the org's, in the org's place; the mode's others follow), or,
// for the passthrough (no mode), the org's input and output entries when its admin turned `passthrough` on. The
// org's list is read as modes are (kept per isolate for MODES_CACHE_MS, forgotten here at once by the PUT), so a
// turn pays no D1 round trip to learn it. The one module with the SQL of `org_guardrails`.
import { z } from "zod";
import type { Db } from "../db";
import { IsolateCache } from "../isolate-cache";
import { settings } from "../settings";
import { type Guardrail, type GuardrailPoint, StoredGuardrails } from "./guardrail-config";

export interface OrgGuardrails {
  guardrails: Guardrail[];
  /** The org's input and output guardrails apply to the /v1 passthrough doors too. */
  passthrough: boolean;
  /** When its admin last wrote them; null: never. */
  updatedAt: string | null;
}

const NONE: OrgGuardrails = { guardrails: [], passthrough: false, updatedAt: null };
/** The points the passthrough checks: what goes to the model and what comes back. */
const PASSTHROUGH_POINTS: ReadonlySet<GuardrailPoint> = new Set(["input", "output"]);

const copies = new IsolateCache<OrgGuardrails>();

const OrgGuardrailsRow = z.object({
  guardrails: z.string(),
  passthrough: z.number(),
  updated_at: z.string(),
});

/** The org's guardrails, from D1 (none written: an empty list, passthrough off). */
export async function readOrgGuardrails(db: Db, org: string): Promise<OrgGuardrails> {
  const row = await db
    .prepare("SELECT guardrails, passthrough, updated_at FROM org_guardrails WHERE org = ?")
    .bind(org)
    .first();
  if (row === null) return NONE;
  const parsed = OrgGuardrailsRow.parse(row);
  return {
    guardrails: StoredGuardrails.parse(JSON.parse(parsed.guardrails)),
    passthrough: parsed.passthrough === 1,
    updatedAt: parsed.updated_at,
  };
}

/** The org's guardrails, from the isolate's copy while it is fresh (MODES_CACHE_MS). */
export function orgGuardrails(env: Cloudflare.Env, db: Db, org: string, now?: number): Promise<OrgGuardrails> {
  const ttlMs = settings(env).modes.cacheMs;
  return copies.get(env.DB, org, ttlMs, () => readOrgGuardrails(db, org), now === undefined ? {} : { now });
}

/** The org's list under the mode's: a mode entry replaces the org's of its name in place, the rest follow. */
export function mergeGuardrails(org: readonly Guardrail[], mode: readonly Guardrail[]): Guardrail[] {
  const own = new Map(mode.map((g) => [g.name, g]));
  const merged = org.map((g) => own.get(g.name) ?? g);
  const taken = new Set(org.map((g) => g.name));
  return [...merged, ...mode.filter((g) => !taken.has(g.name))];
}

/**
 * The guardrails of a turn of `org` in `mode`, or (mode null) of a passthrough call: the org's input and output
 * entries when its passthrough switch is on, none otherwise.
 */
export async function effectiveGuardrails(
  env: Cloudflare.Env,
  db: Db,
  org: string,
  mode: { guardrails: readonly Guardrail[] } | null,
): Promise<Guardrail[]> {
  const own = await orgGuardrails(env, db, org);
  if (mode !== null) return mergeGuardrails(own.guardrails, mode.guardrails);
  if (!own.passthrough) return [];
  return own.guardrails.flatMap((g) => {
    const points = g.points.filter((p) => PASSTHROUGH_POINTS.has(p));
    return points.length === 0 ? [] : [points.length === g.points.length ? g : { ...g, points }];
  });
}

/** The statement that writes the org's guardrails, for the batch that also writes its audit row. */
export function orgGuardrailsStatement(
  db: Db,
  org: string,
  guardrails: readonly Guardrail[],
  passthrough: boolean,
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO org_guardrails (org, guardrails, passthrough) VALUES (?1, ?2, ?3)
       ON CONFLICT (org) DO UPDATE SET guardrails = ?2, passthrough = ?3,
         updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
    )
    .bind(org, JSON.stringify(guardrails), passthrough ? 1 : 0);
}

/** Drops this isolate's copies (after the PUT): the next turn here reads D1. */
export function forgetOrgGuardrails(binding: D1Database): void {
  copies.forget(binding);
}

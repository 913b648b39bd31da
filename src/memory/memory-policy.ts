// Whether memory is on: for an org (its admin's switch, PUT /admin/memory; on by default) AND for a mode (the mode's
// `memory` flag; on by default). Off means no memory tool offered, no prompt section, nothing stored. The org's
// switch is read as the modes are (kept per isolate for MODES_CACHE_MS, forgotten here at once by the PUT), so a
// turn does not pay a D1 round trip to learn it. The one module with the SQL of `org_settings`.
import { z } from "zod";
import type { Db } from "../db";
import { IsolateCache } from "../isolate-cache";
import type { AgentMode } from "../modes/agent-mode";
import { settings } from "../settings";

/**
 * The tools offered only when memory is on (the recall side leaves them out of a turn's tools otherwise). Their
 * names are spelled here as in their files (src/tools/memory-*.ts, src/tools/conversation-search.ts), which import
 * this module: a test checks the two agree.
 */
export const MEMORY_TOOL_NAMES: readonly string[] = [
  "memory_save",
  "memory_search",
  "memory_forget",
  "conversation_search",
];

const copies = new IsolateCache<boolean>();

/** The org's switch, from D1: on unless its admin turned it off. */
async function readOrgMemoryEnabled(db: Db, org: string): Promise<boolean> {
  const row = await db.prepare("SELECT memory_enabled FROM org_settings WHERE org = ?").bind(org).first();
  return row === null ? true : z.object({ memory_enabled: z.number() }).parse(row).memory_enabled === 1;
}

/** The org's switch, from the isolate's copy while it is fresh (MODES_CACHE_MS). */
export function orgMemoryEnabled(env: Cloudflare.Env, db: Db, org: string, now?: number): Promise<boolean> {
  const ttlMs = settings(env).modes.cacheMs;
  return copies.get(env.DB, org, ttlMs, () => readOrgMemoryEnabled(db, org), now === undefined ? {} : { now });
}

/** Memory is on for a turn of `org` in `mode`: the mode's flag and the org's switch. */
export async function memoryOn(
  env: Cloudflare.Env,
  db: Db,
  org: string,
  mode: Pick<AgentMode, "memory">,
): Promise<boolean> {
  return mode.memory && (await orgMemoryEnabled(env, db, org));
}

/** The statement that sets the org's switch, for the batch that also writes its audit row. */
export function orgMemoryStatement(db: Db, org: string, enabled: boolean): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO org_settings (org, memory_enabled) VALUES (?1, ?2)
       ON CONFLICT (org) DO UPDATE SET memory_enabled = ?2, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
    )
    .bind(org, enabled ? 1 : 0);
}

/** Drops this isolate's copies of the switch (after the PUT): the next turn here reads D1. */
export function forgetOrgMemoryPolicy(binding: D1Database): void {
  copies.forget(binding);
}

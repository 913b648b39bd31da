// Mode versions (docs/modes.md, "Versions"): the SQL of mode_versions, the snapshot of a mode as a version keeps it,
// and the diff of two. Every change through the admin API bumps `modes.version` and writes its row in the batch of
// the change (catalog-service.ts's upsertMode); a mode never changed since migration 0035 has no row for version 1
// until its first change, so the reads here answer its current state as that version.
import { z } from "zod";
import type { Db } from "../db";
import { AgentMode } from "./agent-mode";

/** What a version keeps: the whole mode but its version number (the row's column holds that). */
const ModeSnapshot = AgentMode.omit({ version: true });

/** The snapshot's JSON of `mode` as it stands (a field with a default, left out, takes it). */
export function snapshotText(mode: z.input<typeof ModeSnapshot>): string {
  return JSON.stringify(ModeSnapshot.parse(mode));
}

/** One version as the list shows it. */
export const ModeVersionEntry = z.object({
  version: z.number().int(),
  createdAt: z.string(),
  /** The user who made the change; null for a version-1 row written lazily (who made the mode is not known). */
  createdBy: z.string().nullable(),
  /** It is the mode as it now stands. */
  current: z.boolean(),
});
export type ModeVersionEntry = z.infer<typeof ModeVersionEntry>;

const VersionRow = z.object({
  version: z.number().int(),
  snapshot: z.string(),
  created_at: z.string(),
  created_by: z.string(),
});

function snapshotOf(row: z.infer<typeof VersionRow>): AgentMode {
  return AgentMode.parse({ ...ModeSnapshot.parse(JSON.parse(row.snapshot)), version: row.version });
}

/**
 * The statement that keeps `existing` (the mode before a change) as its own version when it has no row yet (a mode
 * never changed since 0035): run before the change in its batch; it does nothing when the row is there.
 */
export function keepVersionStatement(db: Db, existing: AgentMode): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO mode_versions (org, mode_key, version, snapshot, created_at, created_by)
       VALUES (?, ?, ?, ?, ?, '')`,
    )
    .bind(existing.org ?? "", existing.key, existing.version, snapshotText(existing), existing.updatedAt);
}

/**
 * The statement that writes the mode just changed (`snapshot`, without its number) as the version `modes` now holds:
 * run after the change in its batch, so the number is the one the change gave it, whoever else writes at once.
 */
export function newVersionStatement(
  db: Db,
  owner: string | null,
  key: string,
  snapshot: string,
  by: string,
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO mode_versions (org, mode_key, version, snapshot, created_at, created_by)
       SELECT org, key, version, ?, updated_at, ? FROM modes WHERE org = ? AND key = ?`,
    )
    .bind(snapshot, by, owner ?? "", key);
}

/** The statement that forgets a deleted mode's versions (a mode made again under its key starts at 1). */
export function deleteVersionsStatement(db: Db, owner: string | null, key: string): D1PreparedStatement {
  return db.prepare("DELETE FROM mode_versions WHERE org = ? AND mode_key = ?").bind(owner ?? "", key);
}

/** The versions of `current` (a mode as stored, of its owner), newest first. */
export async function listVersions(db: Db, current: AgentMode): Promise<ModeVersionEntry[]> {
  const { results } = await db
    .prepare(
      `SELECT version, created_at, created_by FROM mode_versions WHERE org = ? AND mode_key = ?
       ORDER BY version DESC`,
    )
    .bind(current.org ?? "", current.key)
    .all();
  const rows = results.map((r) => VersionRow.omit({ snapshot: true }).parse(r));
  const entries = rows.map((r) => ({
    version: r.version,
    createdAt: r.created_at,
    createdBy: r.created_by === "" ? null : r.created_by,
    current: r.version === current.version,
  }));
  // A mode never changed since 0035 has no row: it is its own version 1.
  if (!rows.some((r) => r.version === current.version)) {
    entries.unshift({ version: current.version, createdAt: current.updatedAt, createdBy: null, current: true });
  }
  return entries;
}

/** Version `version` of `current`'s mode (the current mode itself for its own number); null when there is none. */
export async function readVersion(db: Db, current: AgentMode, version: number): Promise<AgentMode | null> {
  if (version === current.version) return current;
  const row = await db
    .prepare(
      "SELECT version, snapshot, created_at, created_by FROM mode_versions WHERE org = ? AND mode_key = ? AND version = ?",
    )
    .bind(current.org ?? "", current.key, version)
    .first();
  return row ? snapshotOf(VersionRow.parse(row)) : null;
}

/** Fields a diff leaves out: they change with every version whatever changed. */
const NOT_COMPARED = new Set(["version", "createdAt", "updatedAt"]);

export interface ModeChange {
  field: string;
  before: unknown;
  after: unknown;
}

/** The fields whose values differ between two versions of a mode, in the order the mode lists them. */
export function diffModes(before: AgentMode, after: AgentMode): ModeChange[] {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((f) => !NOT_COMPARED.has(f));
  const b: Record<string, unknown> = before;
  const a: Record<string, unknown> = after;
  return fields
    .filter((field) => JSON.stringify(b[field] ?? null) !== JSON.stringify(a[field] ?? null))
    .map((field) => ({ field, before: b[field] ?? null, after: a[field] ?? null }));
}

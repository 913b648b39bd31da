// An org's provider keys (what LiteLLM and Portkey call bring-your-own or virtual keys): stored per org in D1
// (`org_secrets`), sealed by the SecretBox, write-only (a list shows names, the last four characters and dates,
// never a value). An org's model routes and MCP servers name them; the values are opened only where a call needs them.
import { z } from "zod";
import type { Db } from "../db";
import { ApiError } from "../errors";
import { settings } from "../settings";
import { SecretBox, SecretBoxError } from "./secret-box";

/** The most secrets one org keeps, and the longest value (a provider key is far shorter). */
export const MAX_ORG_SECRETS = 100;
export const MAX_SECRET_VALUE_CHARS = 8_192;
/** Secrets' names one query asks for (D1 binds at most 100 values to a statement). */
const NAMES_A_QUERY = 50;
/** A value shorter than this shows no last four characters (they would be too much of it). */
const SHOWN_TAIL_FROM_CHARS = 12;

export const OrgSecretView = z
  .object({
    name: z.string(),
    /** The value's last four characters (empty for a value under 12 characters): enough to tell keys apart. */
    lastFour: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: "OrgSecret" });
export type OrgSecretView = z.infer<typeof OrgSecretView>;

const Row = z.object({
  name: z.string(),
  value_ciphertext: z.string(),
  wrapped_key: z.string(),
  key_id: z.string(),
  last_four: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A sealed value and the org it is of, as a rotation reads every row. */
const SealedRow = Row.pick({ name: true, value_ciphertext: true, wrapped_key: true, key_id: true }).extend({
  org: z.string(),
});

const viewOf = (row: z.infer<typeof Row>): OrgSecretView => ({
  name: row.name,
  lastFour: row.last_four,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The box of this Worker's SECRETS_KEY, or null when none is set (orgs cannot store secrets then). */
export async function secretBoxOf(env: object): Promise<SecretBox | null> {
  const keys = settings(env).secrets;
  return keys ? SecretBox.of(keys) : null;
}

/** The box, or the refusal that names the setting an operator must make first. */
export async function requireSecretBox(env: object): Promise<SecretBox> {
  const box = await secretBoxOf(env);
  if (box) return box;
  throw new ApiError(
    "misconfigured",
    "The server is misconfigured: SECRETS_KEY is not set, so organizations cannot store provider keys (docs/auth.md#provider-keys).",
  );
}

/** What a list shows of a value: its last four characters, or nothing for a value too short to show any of. */
export function lastFourOf(value: string): string {
  return value.length >= SHOWN_TAIL_FROM_CHARS ? value.slice(-4) : "";
}

export class OrgSecrets {
  constructor(
    private readonly db: Db,
    private readonly org: string,
  ) {}

  async list(): Promise<OrgSecretView[]> {
    const { results } = await this.db
      .prepare(
        "SELECT name, value_ciphertext, wrapped_key, key_id, last_four, created_at, updated_at FROM org_secrets WHERE org = ? ORDER BY name",
      )
      .bind(this.org)
      .all();
    return results.map((r) => viewOf(Row.parse(r)));
  }

  async get(name: string): Promise<OrgSecretView | null> {
    return (await this.list()).find((s) => s.name === name) ?? null;
  }

  /**
   * Stores `value` under `name` (sealed), with `also` in the same batch (its audit row); `created` when the name is
   * new. Refused past MAX_ORG_SECRETS.
   */
  async put(
    box: SecretBox,
    name: string,
    value: string,
    also: D1PreparedStatement[] = [],
  ): Promise<{ secret: OrgSecretView; created: boolean }> {
    const existing = await this.list();
    const created = !existing.some((s) => s.name === name);
    if (created && existing.length >= MAX_ORG_SECRETS) {
      throw new ApiError(
        "invalid_request",
        `Your organization has ${MAX_ORG_SECRETS} secrets, the most it may keep; delete one first.`,
        { param: "name" },
      );
    }
    const sealed = await box.seal(this.org, name, value);
    const [written] = await this.db.batch([
      this.db
        .prepare(
          `INSERT INTO org_secrets (org, name, value_ciphertext, wrapped_key, key_id, last_four) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (org, name) DO UPDATE SET value_ciphertext = excluded.value_ciphertext,
           wrapped_key = excluded.wrapped_key, key_id = excluded.key_id, last_four = excluded.last_four,
           updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         RETURNING name, value_ciphertext, wrapped_key, key_id, last_four, created_at, updated_at`,
        )
        .bind(this.org, name, sealed.valueCiphertext, sealed.wrappedKey, sealed.keyId, lastFourOf(value)),
      ...also,
    ]);
    return { secret: viewOf(Row.parse(written?.results[0])), created };
  }

  /** Removes the secret, with `also` in the same batch (its audit row). */
  async delete(name: string, also: D1PreparedStatement[] = []): Promise<void> {
    await this.db.batch([
      this.db.prepare("DELETE FROM org_secrets WHERE org = ? AND name = ?").bind(this.org, name),
      ...also,
    ]);
  }

  /**
   * The values of the secrets `names` that the org has, opened. A name it does not have is left out, as is one that
   * does not open (told to `unopened`: its wrapping key is gone, or the row was tampered with).
   */
  async values(
    box: SecretBox | null,
    names: readonly string[],
    unopened: (name: string, error: unknown) => void,
  ): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (names.length === 0 || !box) return out;
    // One bound value per name, and D1 takes 100 to a statement: the names in slices (an org keeps at most 100).
    const slices: string[][] = [];
    for (let i = 0; i < names.length; i += NAMES_A_QUERY) slices.push(names.slice(i, i + NAMES_A_QUERY));
    const answers = await this.db.batch(
      slices.map((slice) =>
        this.db
          .prepare(
            `SELECT name, value_ciphertext, wrapped_key, key_id, last_four, created_at, updated_at FROM org_secrets
             WHERE org = ? AND name IN (${slice.map(() => "?").join(", ")})`,
          )
          .bind(this.org, ...slice),
      ),
    );
    for (const raw of answers.flatMap((answer) => answer.results)) {
      const row = Row.parse(raw);
      const sealed = { valueCiphertext: row.value_ciphertext, wrappedKey: row.wrapped_key, keyId: row.key_id };
      try {
        out.set(row.name, await box.open(this.org, row.name, sealed));
      } catch (error) {
        if (!(error instanceof SecretBoxError)) throw error;
        unopened(row.name, error);
      }
    }
    return out;
  }
}

/** What a rewrap did: rows wrapped again, rows already under SECRETS_KEY, and rows that do not open (named). */
export interface Rewrap {
  rewrapped: number;
  current: number;
  /** `org/name` of each row neither key opens (its key gone, or the row changed): left as it is. */
  unopened: string[];
}

/**
 * Wraps every org's data keys again with SECRETS_KEY (after a rotation: the old key as SECRETS_KEY_PREVIOUS); the
 * values' ciphertexts are unchanged. A row that does not open is left as it is and named; the others go on.
 */
export async function rewrapAll(db: Db, box: SecretBox): Promise<Rewrap> {
  const { results } = await db
    .prepare("SELECT org, name, value_ciphertext, wrapped_key, key_id FROM org_secrets")
    .all();
  const updates: D1PreparedStatement[] = [];
  const unopened: string[] = [];
  for (const row of results.map((r) => SealedRow.parse(r))) {
    let next: Awaited<ReturnType<SecretBox["rewrap"]>>;
    try {
      next = await box.rewrap(row.org, row.name, {
        valueCiphertext: row.value_ciphertext,
        wrappedKey: row.wrapped_key,
        keyId: row.key_id,
      });
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      unopened.push(`${row.org}/${row.name}`);
      continue;
    }
    if (!next) continue;
    updates.push(
      db
        .prepare("UPDATE org_secrets SET wrapped_key = ?, key_id = ? WHERE org = ? AND name = ? AND key_id = ?")
        .bind(next.wrappedKey, next.keyId, row.org, row.name, row.key_id),
    );
  }
  if (updates.length > 0) await db.batch(updates);
  return { rewrapped: updates.length, current: results.length - updates.length - unopened.length, unopened };
}

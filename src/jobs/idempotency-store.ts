// The idempotency keys' rows in D1 (migrations/0027): a caller's key is claimed by its first request (in flight, with
// a lease), then holds that request's answer until the window ends. Every write is conditional on what was read (a
// claim token, an expired lease or window), so two requests racing for one key never both run. Times are passed in
// (`now`), so the window and the lease are tested with simulated time.
import { z } from "zod";
import { SecretBox } from "../tenancy/secret-box";

/** Whose key it is: keys are per org and per caller (the user, and the API key the request came with). */
export interface KeyScope {
  org: string;
  user: string;
  keyId: string;
  key: string;
}

/** The first request's answer, as it is replayed: its status, the headers that matter, its body. */
export const StoredAnswer = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  /** The body was more than the store keeps: the key holds, but nothing is replayed. */
  tooLarge: z.boolean().optional(),
});
export type StoredAnswer = z.infer<typeof StoredAnswer>;

/** What a request with a key finds: the key is its own now (`claimed`), or the first request's state. */
export type Claim =
  | { kind: "claimed"; claim: string }
  | { kind: "reused" }
  | { kind: "in_flight" }
  | { kind: "done"; answer: StoredAnswer };

const Row = z.object({
  request_hash: z.string(),
  state: z.enum(["in_flight", "done"]),
  claim: z.string(),
  lease_expires_at: z.number(),
  answer: z.string().nullable(),
  answer_wrapped_key: z.string().nullable(),
  answer_key_id: z.string().nullable(),
  expires_at: z.number(),
});

/** The name an answer is sealed under (with the org as the SecretBox's additional data): a row moved does not open. */
const sealName = (scope: KeyScope) => `idempotency\n${scope.user}\n${scope.keyId}\n${scope.key}`;

export class IdempotencyStore {
  constructor(
    private readonly db: D1Database,
    private readonly secrets: { key: string; previousKey: string | null } | null,
  ) {}

  /**
   * Claims `scope`'s key for a request whose hash is `hash`, or says why not: another body (`reused`), the first
   * still running (`in_flight`), or its answer (`done`). A key whose window ended, or whose first request's lease
   * expired (its worker died, or it failed), is claimed afresh.
   */
  async claim(
    scope: KeyScope,
    hash: string,
    times: { now: number; leaseMs: number; windowMs: number },
  ): Promise<Claim> {
    const { now, leaseMs, windowMs } = times;
    const claim = crypto.randomUUID();
    const where = "org = ? AND user_id = ? AND key_id = ? AND idempotency_key = ?";
    const ids = [scope.org, scope.user, scope.keyId, scope.key];
    const inserted = await this.db
      .prepare(
        `INSERT INTO idempotency_keys (org, user_id, key_id, idempotency_key, request_hash, state, claim,
           lease_expires_at, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 'in_flight', ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      )
      .bind(...ids, hash, claim, now + leaseMs, now, now + windowMs)
      .run();
    if (inserted.meta.changes === 1) return { kind: "claimed", claim };
    const found = await this.db
      .prepare(`SELECT * FROM idempotency_keys WHERE ${where}`)
      .bind(...ids)
      .first();
    if (!found) return this.claim(scope, hash, times);
    const row = Row.parse(found);
    const stale = row.expires_at <= now || (row.state === "in_flight" && row.lease_expires_at <= now);
    if (!stale) {
      if (row.request_hash !== hash) return { kind: "reused" };
      if (row.state === "in_flight") return { kind: "in_flight" };
      return { kind: "done", answer: await this.open(scope, row) };
    }
    // Taken over only if no other request took it over since it was read (the claim token is the row's version).
    const taken = await this.db
      .prepare(
        `UPDATE idempotency_keys SET request_hash = ?, state = 'in_flight', claim = ?, lease_expires_at = ?,
           answer = NULL, answer_wrapped_key = NULL, answer_key_id = NULL, created_at = ?, expires_at = ?
         WHERE ${where} AND claim = ?`,
      )
      .bind(hash, claim, now + leaseMs, now, now + windowMs, ...ids, row.claim)
      .run();
    return taken.meta.changes === 1 ? { kind: "claimed", claim } : { kind: "in_flight" };
  }

  /** The claimed request's answer, kept for the rest of the window (sealed when SECRETS_KEY is set). */
  async complete(scope: KeyScope, claim: string, answer: StoredAnswer): Promise<void> {
    const text = JSON.stringify(answer);
    const sealed = this.secrets
      ? await (await SecretBox.of(this.secrets)).seal(scope.org, sealName(scope), text)
      : null;
    await this.db
      .prepare(
        `UPDATE idempotency_keys SET state = 'done', answer = ?, answer_wrapped_key = ?, answer_key_id = ?
         WHERE org = ? AND user_id = ? AND key_id = ? AND idempotency_key = ? AND claim = ?`,
      )
      .bind(
        sealed ? sealed.valueCiphertext : text,
        sealed?.wrappedKey ?? null,
        sealed?.keyId ?? null,
        scope.org,
        scope.user,
        scope.keyId,
        scope.key,
        claim,
      )
      .run();
  }

  /** Gives the key back (the request changed nothing, or failed): the next request with it runs. */
  async release(scope: KeyScope, claim: string): Promise<void> {
    await this.db
      .prepare(
        "DELETE FROM idempotency_keys WHERE org = ? AND user_id = ? AND key_id = ? AND idempotency_key = ? AND claim = ?",
      )
      .bind(scope.org, scope.user, scope.keyId, scope.key, claim)
      .run();
  }

  private async open(scope: KeyScope, row: z.infer<typeof Row>): Promise<StoredAnswer> {
    const { answer, answer_wrapped_key: wrappedKey, answer_key_id: keyId } = row;
    if (answer === null) throw new Error("An idempotency key marked done holds no answer.");
    if (wrappedKey === null || keyId === null) return StoredAnswer.parse(JSON.parse(answer));
    if (!this.secrets) throw new Error("An idempotent answer was sealed, and SECRETS_KEY is no longer set.");
    const box = await SecretBox.of(this.secrets);
    const text = await box.open(scope.org, sealName(scope), { valueCiphertext: answer, wrappedKey, keyId });
    return StoredAnswer.parse(JSON.parse(text));
  }
}

/** The hourly cron's part: deletes keys whose window ended (at most `batch` a run). */
export async function deleteExpiredKeys(db: D1Database, now: number, batch = 1000): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM idempotency_keys WHERE rowid IN (
         SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`,
    )
    .bind(now, batch)
    .run();
  return result.meta.changes;
}

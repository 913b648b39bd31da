-- Issue 43: Idempotency-Key (the IETF httpapi draft's header) on the POSTs that start work. One row per key a caller
-- (org, user and API key) sent within the window: the hash of the first request (method, path, body), whether it is
-- still in flight (its lease: a worker that died mid-request frees the key when it expires), and its answer to replay
-- (sealed with SECRETS_KEY when one is set: an answer may show a secret once). Expired rows are deleted by the
-- hourly cron (src/jobs/idempotency-store.ts).
CREATE TABLE idempotency_keys (
  org TEXT NOT NULL,
  user_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
  claim TEXT NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  answer TEXT,
  answer_wrapped_key TEXT,
  answer_key_id TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (org, user_id, key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

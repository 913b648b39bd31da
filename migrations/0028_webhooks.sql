-- Issue 43: signed webhooks. An endpoint is an org's (owner_user null: an admin's, told of every session of the org)
-- or one member's (told of their own sessions and schedules only). Its signing secret is sealed by the SecretBox
-- (src/tenancy/secret-box.ts), never stored in clear. A delivery is one event to one endpoint: its id is the
-- `webhook-id` a receiver dedupes by, the same across retries; each POST of it is one attempt.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  owner_user TEXT,
  created_by TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 1,
  disabled_reason TEXT,
  disabled_at TEXT,
  secret_ciphertext TEXT NOT NULL,
  wrapped_key TEXT NOT NULL,
  key_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_by_org ON webhook_endpoints (org, owner_user);

CREATE TABLE webhook_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  endpoint_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'abandoned')),
  attempts INTEGER NOT NULL DEFAULT 0,
  window_started_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_attempt_at TEXT,
  next_attempt_at TEXT
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, seq);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at TEXT NOT NULL,
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);

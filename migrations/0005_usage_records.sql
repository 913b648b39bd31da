-- Token usage of the OpenAI-compatible passthrough: one row per upstream answer that reported usage,
-- by org and API key id (never the key itself), for billing and per-org reports.
CREATE TABLE usage_records (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  key_id TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Reports read one org's usage over a time range.
CREATE INDEX usage_records_org_created ON usage_records (org, created_at);

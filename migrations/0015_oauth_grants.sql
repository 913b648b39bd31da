-- Issue 26: what a person allowed an MCP client to do on their behalf (OAuth for /mcp). The authorization server
-- (@cloudflare/workers-oauth-provider) keeps its grants and tokens in KV, hashed and encrypted; this row is
-- aptix's own record of each grant, read on every request a token of it makes (cached as keys are), so a grant
-- revoked, or its user disabled, ends its client's access at once rather than when KV's copies converge.
CREATE TABLE oauth_grants (
  id TEXT PRIMARY KEY,
  -- The authorization server's id of the same grant (its tokens are `<user>:<this>:<secret>`).
  kv_grant_id TEXT NOT NULL,
  org TEXT NOT NULL,
  user_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  client_name TEXT NOT NULL,
  scopes TEXT NOT NULL CHECK (json_valid(scopes)),
  resource TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  revoked_at TEXT
);
CREATE INDEX oauth_grants_user ON oauth_grants (org, user_id, created_at DESC);

-- Every agent session, by org: which sessions a caller has (the MCP door lists a caller's recent sessions as
-- resources). The session's state lives in its Durable Object; this is only the index.
CREATE TABLE session_index (
  session_id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  user_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  parent_session_id TEXT,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX session_index_org_created ON session_index (org, created_at DESC);

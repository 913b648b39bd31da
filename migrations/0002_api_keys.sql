-- API keys: only the SHA-256 of a key is stored, with the org, user and scopes it stands for.
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  key_hash TEXT NOT NULL UNIQUE CHECK (length(key_hash) = 64 AND key_hash NOT GLOB '*[^0-9a-f]*'),
  name TEXT NOT NULL DEFAULT '',
  org TEXT NOT NULL CHECK (length(org) > 0),
  user_id TEXT NOT NULL CHECK (length(user_id) > 0),
  scopes TEXT NOT NULL CHECK (json_valid(scopes)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  revoked_at TEXT
);

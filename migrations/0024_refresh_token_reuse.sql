-- Issue 40: refresh token reuse (OAuth 2.1 §4.3.1). The authorization server rotates a grant's refresh token at each
-- use but keeps the one before valid until the next rotation; aptix remembers the SHA-256 of each refresh token the
-- server rotated away, with the grant it belongs to (the server's ids of grant and user, as in the token), so a
-- second use of it is refused and ends that grant (src/auth/refresh-token-reuse.ts). Rows older than a refresh
-- token's longest life name tokens that expired anyway and are deleted as new ones come.
CREATE TABLE oauth_rotated_refresh_tokens (
  token_hash TEXT PRIMARY KEY,
  kv_grant_id TEXT NOT NULL,
  kv_user_id TEXT NOT NULL,
  rotated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX oauth_rotated_refresh_tokens_at ON oauth_rotated_refresh_tokens (rotated_at);
-- Ending a grant by the server's id of it (a reused refresh token names only that).
CREATE INDEX oauth_grants_kv_grant ON oauth_grants (kv_grant_id);

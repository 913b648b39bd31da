-- Issue 26: people, not only keys. A user row per person of an org, seen by key, browser session or OAuth token:
-- `id` is what the org calls them (an API key's user, or the claim OIDC_USER_CLAIM names), email and name from
-- the identity provider's claims, first and last seen (last_seen_at is written at most once a minute per isolate).
-- A disabled user's keys, browser sessions and OAuth grants are refused.
CREATE TABLE users (
  org TEXT NOT NULL CHECK (length(org) > 0),
  id TEXT NOT NULL CHECK (length(id) > 0),
  email TEXT,
  name TEXT,
  first_seen_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  last_seen_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  last_seen_via TEXT,
  disabled_at TEXT,
  PRIMARY KEY (org, id)
);
CREATE INDEX users_org_seen ON users (org, last_seen_at DESC);

-- Browser sessions after single sign-on (or a sign-in with an API key, api_key_id: the session stands only while
-- that key does): the cookie holds an opaque secret; only its SHA-256 is stored. A session ends at expires_at,
-- after BROWSER_SESSION_IDLE_MS without a request (idle_until), or when ended (sign-out, the user disabled).
CREATE TABLE browser_sessions (
  id TEXT PRIMARY KEY,
  secret_hash TEXT NOT NULL UNIQUE CHECK (length(secret_hash) = 64),
  org TEXT NOT NULL,
  user_id TEXT NOT NULL,
  scopes TEXT NOT NULL CHECK (json_valid(scopes)),
  via TEXT NOT NULL,
  api_key_id TEXT,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  expires_at TEXT NOT NULL,
  idle_until TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX browser_sessions_user ON browser_sessions (org, user_id);

-- A sign-in under way (GET /auth/login to /auth/callback): the PKCE verifier and nonce, kept here (not in the
-- browser) under the SHA-256 of its state; used once, then deleted; stale after ten minutes.
CREATE TABLE sign_in_flows (
  state_hash TEXT PRIMARY KEY CHECK (length(state_hash) = 64),
  code_verifier TEXT NOT NULL,
  nonce TEXT NOT NULL,
  return_to TEXT NOT NULL,
  expires_at TEXT NOT NULL
);

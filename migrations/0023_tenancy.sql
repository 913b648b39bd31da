-- Issue 40: tenancy. The configuration every org runs on gets an owner: `org` is the org that made a mode, a model
-- route or an MCP server (visible and usable inside it only), or '' for the deployment's (built-in and made by an
-- operator: visible to every org, changed only by an operator). Every row there today becomes the deployment's.
-- A name is unique per owner; inside an org, its own entry of a name is used instead of the deployment's.
-- SQLite cannot change a UNIQUE or PRIMARY KEY in place, so each table is made again and its rows copied over.

CREATE TABLE modes_new (
  id TEXT PRIMARY KEY CHECK (length(id) = 32 AND id NOT GLOB '*[^0-9a-f]*'),
  org TEXT NOT NULL DEFAULT '',
  key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 64),
  display_name TEXT NOT NULL CHECK (length(display_name) > 0),
  description TEXT NOT NULL CHECK (length(description) > 0),
  system_prompt_summary TEXT NOT NULL DEFAULT '',
  system_prompt TEXT NOT NULL CHECK (length(system_prompt) > 0),
  is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  human_role_hints TEXT CHECK (human_role_hints IS NULL OR json_valid(human_role_hints)),
  example_utterances TEXT CHECK (example_utterances IS NULL OR json_valid(example_utterances)),
  tools TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tools)),
  approval_required_tools TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(approval_required_tools)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  model_route TEXT NOT NULL DEFAULT 'default',
  UNIQUE (org, key)
);
INSERT INTO modes_new (id, org, key, display_name, description, system_prompt_summary, system_prompt, is_default,
  human_role_hints, example_utterances, tools, approval_required_tools, created_at, updated_at, model_route)
SELECT id, '', key, display_name, description, system_prompt_summary, system_prompt, is_default,
  human_role_hints, example_utterances, tools, approval_required_tools, created_at, updated_at, model_route
FROM modes;
DROP TABLE modes;
ALTER TABLE modes_new RENAME TO modes;
-- At most one default per owner: the deployment's, and each org's own (which its people get instead).
CREATE UNIQUE INDEX modes_single_default ON modes (org) WHERE is_default = 1;

-- The deployment's modes an org hides from its own view (PUT /admin/modes/:key {"enabled": false}).
CREATE TABLE hidden_modes (
  org TEXT NOT NULL CHECK (length(org) > 0),
  key TEXT NOT NULL,
  hidden_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (org, key)
);

CREATE TABLE model_routes_new (
  org TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  provider TEXT NOT NULL CHECK (provider IN ('openai_compatible', 'workers_ai', 'anthropic')),
  model TEXT NOT NULL,
  base_url TEXT,
  -- The deployment's routes name a Worker secret; an org's routes name one of the org's secrets (org_secrets).
  api_key_secret TEXT,
  tool_format TEXT NOT NULL CHECK (tool_format IN ('native', 'json')),
  timeout_ms INTEGER,
  fallbacks TEXT NOT NULL CHECK (json_valid(fallbacks)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  input_price_per_mtok REAL,
  output_price_per_mtok REAL,
  context_tokens INTEGER,
  anthropic_version TEXT,
  input_modalities TEXT NOT NULL DEFAULT '["text"]',
  PRIMARY KEY (org, name)
);
INSERT INTO model_routes_new (org, name, provider, model, base_url, api_key_secret, tool_format, timeout_ms, fallbacks,
  created_at, updated_at, input_price_per_mtok, output_price_per_mtok, context_tokens, anthropic_version,
  input_modalities)
SELECT '', name, provider, model, base_url, api_key_secret, tool_format, timeout_ms, fallbacks,
  created_at, updated_at, input_price_per_mtok, output_price_per_mtok, context_tokens, anthropic_version,
  input_modalities
FROM model_routes;
DROP TABLE model_routes;
ALTER TABLE model_routes_new RENAME TO model_routes;

CREATE TABLE mcp_servers_new (
  org TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  description TEXT NOT NULL,
  -- As a route's key: a Worker secret's name for the deployment's servers, an org secret's for an org's.
  auth_secret TEXT,
  approval TEXT NOT NULL CHECK (approval IN ('always', 'never', 'unless_read_only')),
  tools TEXT CHECK (tools IS NULL OR json_valid(tools)),
  timeout_ms INTEGER NOT NULL,
  category TEXT,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  last_discovery TEXT CHECK (last_discovery IS NULL OR json_valid(last_discovery)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (org, name)
);
INSERT INTO mcp_servers_new (org, name, url, description, auth_secret, approval, tools, timeout_ms, category, enabled,
  last_discovery, created_at, updated_at)
SELECT '', name, url, description, auth_secret, approval, tools, timeout_ms, category, enabled,
  last_discovery, created_at, updated_at
FROM mcp_servers;
DROP TABLE mcp_servers;
ALTER TABLE mcp_servers_new RENAME TO mcp_servers;

-- An org's provider keys (PUT /admin/secrets/:name), encrypted at rest: the value with a data key of its own
-- (AES-256-GCM, bound to its org and name), the data key wrapped by the Worker's SECRETS_KEY (key_id says by which).
-- Write-only: only the last four characters are kept in the clear, for people to tell keys apart.
CREATE TABLE org_secrets (
  org TEXT NOT NULL CHECK (length(org) > 0),
  name TEXT NOT NULL,
  value_ciphertext TEXT NOT NULL,
  wrapped_key TEXT NOT NULL,
  key_id TEXT NOT NULL,
  last_four TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (org, name)
);

-- Every change an admin or operator makes: who (org, user, credential, role), what (action and target), the
-- target's state before and after (secrets' values never), and the request it came in. Append-only.
CREATE TABLE audit_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- The org whose configuration changed; '' for the deployment's.
  org TEXT NOT NULL,
  actor_org TEXT NOT NULL,
  actor_user TEXT NOT NULL,
  actor_credential TEXT NOT NULL,
  actor_role TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  before_json TEXT CHECK (before_json IS NULL OR json_valid(before_json)),
  after_json TEXT CHECK (after_json IS NULL OR json_valid(after_json)),
  request_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_org ON audit_log (org, seq DESC);
CREATE TRIGGER audit_log_append_only_update BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_append_only_delete BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- A kept response is its session owner's: the user is recorded with it (filled in from the session index for the
-- responses kept before).
ALTER TABLE agent_responses ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
UPDATE agent_responses SET user_id = COALESCE(
  (SELECT s.user_id FROM session_index s WHERE s.session_id = agent_responses.session_id), '');

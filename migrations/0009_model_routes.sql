-- Model routes (PUT /admin/model-routes/:name): which provider and model serve a call, and the routes to try
-- when it fails. No key is stored: api_key_secret is the NAME of a Worker secret holding it. The route
-- `default` is not stored: it is made from the LLM_* vars.
CREATE TABLE model_routes (
  name TEXT PRIMARY KEY,
  provider TEXT NOT NULL CHECK (provider IN ('openai_compatible', 'workers_ai')),
  model TEXT NOT NULL,
  base_url TEXT,
  api_key_secret TEXT,
  tool_format TEXT NOT NULL CHECK (tool_format IN ('native', 'json')),
  timeout_ms INTEGER,
  -- JSON array of route names, tried in order.
  fallbacks TEXT NOT NULL CHECK (json_valid(fallbacks)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

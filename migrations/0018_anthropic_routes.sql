-- Issue 28: a model route may have provider 'anthropic' (the Messages API), with the anthropic-version it sends.
-- SQLite cannot change a CHECK in place, so the table is made again with the wider CHECK and its rows copied over.
CREATE TABLE model_routes_new (
  name TEXT PRIMARY KEY,
  provider TEXT NOT NULL CHECK (provider IN ('openai_compatible', 'workers_ai', 'anthropic')),
  model TEXT NOT NULL,
  base_url TEXT,
  api_key_secret TEXT,
  tool_format TEXT NOT NULL CHECK (tool_format IN ('native', 'json')),
  timeout_ms INTEGER,
  -- JSON array of route names, tried in order.
  fallbacks TEXT NOT NULL CHECK (json_valid(fallbacks)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  input_price_per_mtok REAL,
  output_price_per_mtok REAL,
  context_tokens INTEGER,
  -- The anthropic-version header an 'anthropic' route sends; null: the default (2023-06-01).
  anthropic_version TEXT
);
INSERT INTO model_routes_new (name, provider, model, base_url, api_key_secret, tool_format, timeout_ms, fallbacks,
  created_at, updated_at, input_price_per_mtok, output_price_per_mtok, context_tokens)
SELECT name, provider, model, base_url, api_key_secret, tool_format, timeout_ms, fallbacks,
  created_at, updated_at, input_price_per_mtok, output_price_per_mtok, context_tokens
FROM model_routes;
DROP TABLE model_routes;
ALTER TABLE model_routes_new RENAME TO model_routes;

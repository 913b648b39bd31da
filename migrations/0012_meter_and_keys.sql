-- Issue 14: one meter for every model call, and keys an admin manages.
-- A usage row for every upstream model call (the passthrough's and the agent loop's): who (user, and the session
-- and mode of a turn), how long it took, and how it ended: ok, error (no answer; no tokens), partial (the client
-- left mid-stream: tokens so far, estimated when the upstream had not said).
ALTER TABLE usage_records ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_records ADD COLUMN session_id TEXT;
ALTER TABLE usage_records ADD COLUMN mode TEXT;
ALTER TABLE usage_records ADD COLUMN latency_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN outcome TEXT NOT NULL DEFAULT 'ok' CHECK (outcome IN ('ok', 'error', 'partial'));
ALTER TABLE usage_records ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0;
CREATE INDEX usage_records_key_created ON usage_records (key_id, created_at);

-- A key may expire; an expired key is refused with its own code.
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
CREATE INDEX api_keys_org ON api_keys (org);

-- A route may have prices, in US dollars per million tokens, for cost figures and cost limits.
ALTER TABLE model_routes ADD COLUMN input_price_per_mtok REAL;
ALTER TABLE model_routes ADD COLUMN output_price_per_mtok REAL;

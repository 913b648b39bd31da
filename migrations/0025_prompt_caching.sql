-- Issue 41 (D): prompt caching. A model route says whether its requests use the provider's prompt cache and how
-- (Anthropic: cache_control breakpoints, with the 5-minute or 1-hour lifetime; an OpenAI-compatible upstream that
-- takes it: prompt_cache_key per session), and what cached input costs: per million tokens read from the cache and
-- written to it (null: the route's input price).
ALTER TABLE model_routes ADD COLUMN prompt_caching INTEGER NOT NULL DEFAULT 1 CHECK (prompt_caching IN (0, 1));
ALTER TABLE model_routes ADD COLUMN prompt_cache_ttl TEXT CHECK (prompt_cache_ttl IN ('5m', '1h'));
ALTER TABLE model_routes ADD COLUMN prompt_cache_key INTEGER NOT NULL DEFAULT 0 CHECK (prompt_cache_key IN (0, 1));
ALTER TABLE model_routes ADD COLUMN cached_input_price_per_mtok REAL;
ALTER TABLE model_routes ADD COLUMN cache_write_price_per_mtok REAL;
-- A usage row counts, of its prompt tokens (which count every input token), those read from the provider's cache
-- and those written to it.
ALTER TABLE usage_records ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN cache_write_input_tokens INTEGER NOT NULL DEFAULT 0;

-- Issue 41 review (E): the field an openai_compatible route names the answer's limit with. OpenAI's reasoning models
-- (o-series, gpt-5) refuse `max_tokens` and take only `max_completion_tokens`; many other OpenAI-compatible servers
-- take only `max_tokens`. Null (a route stored before this column): the default by host, api.openai.com's
-- `max_completion_tokens`, every other host's `max_tokens` (src/routing/model-routes.ts).
ALTER TABLE model_routes ADD COLUMN max_tokens_field TEXT CHECK (max_tokens_field IN ('max_tokens', 'max_completion_tokens'));

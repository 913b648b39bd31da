-- Issue 27: a model route may declare its model's context length (estimated tokens); the agent loop derives the
-- history and prompt budgets of a mode on that route from it instead of the global settings.
ALTER TABLE model_routes ADD COLUMN context_tokens INTEGER;

-- Issue 30: a model route says what its model reads: '["text"]' (every route so far), or '["text","image"]' for a
-- model that reads images too; a user's attached images go only to a mode whose route reads them.
ALTER TABLE model_routes ADD COLUMN input_modalities TEXT NOT NULL DEFAULT '["text"]';

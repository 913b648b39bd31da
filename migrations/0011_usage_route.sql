-- Issue 13: a usage row names the model route that served the call; `model` is the model sent upstream (the
-- route's, or the client's own for `default`).
ALTER TABLE usage_records ADD COLUMN route TEXT NOT NULL DEFAULT 'default';

-- Issue 29: an agent call's usage row names the turn it was made in, so the admin page links the row to the turn's
-- timeline in the console. NULL for the passthrough's calls, and for rows written before this column.
ALTER TABLE usage_records ADD COLUMN turn_id TEXT;

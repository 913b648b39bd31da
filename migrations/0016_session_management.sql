-- Sessions people manage (PATCH and DELETE /context/sessions/:id): a title the person chose, which the session's
-- automatic title (from its first message) never overwrites; when the session was archived (left out of the list
-- unless asked for). A deleted session's row is deleted outright. The expression index serves retention
-- (SESSION_RETENTION_DAYS), which looks for the sessions idle the longest.
ALTER TABLE session_index ADD COLUMN title_set_by_user INTEGER NOT NULL DEFAULT 0;
ALTER TABLE session_index ADD COLUMN archived_at TEXT;
CREATE INDEX session_index_idle ON session_index (COALESCE(updated_at, created_at));

-- The session list (GET /context/sessions): each session's status, whether it waits for its user, a title from
-- its first message and when it last changed. The session's object writes them after each change (off the
-- reply path); `index_seq` (the object's newest logged frame then) keeps a late write from undoing a newer one.
ALTER TABLE session_index ADD COLUMN status TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE session_index ADD COLUMN waiting_for_user INTEGER NOT NULL DEFAULT 0;
ALTER TABLE session_index ADD COLUMN title TEXT;
ALTER TABLE session_index ADD COLUMN updated_at TEXT;
ALTER TABLE session_index ADD COLUMN index_seq INTEGER NOT NULL DEFAULT 0;
UPDATE session_index SET updated_at = created_at;
CREATE INDEX session_index_user_updated ON session_index (org, user_id, updated_at DESC, session_id DESC);

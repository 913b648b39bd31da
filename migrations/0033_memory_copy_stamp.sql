-- Which sessions may hold a copy of their owner's memories (src/session/memory-copy.ts): the list write that reads a
-- copy stamps its time here in the same D1 batch, and a writer of memories tells only the sessions stamped within
-- the copy's life (src/session/memory-notify.ts), not every session written lately: a session in a mode without
-- memory, or one that has had no turn, is never woken by a change it holds no copy of.
ALTER TABLE session_index ADD COLUMN memory_copy_at TEXT;
CREATE INDEX session_index_memory_copy ON session_index (org, memory_copy_at) WHERE memory_copy_at IS NOT NULL;

-- Issue 44: search across a person's conversations (GET /context/search, the conversation_search tool). A session's
-- object writes the text of its conversation's messages here when its list entry is written after a turn (in the
-- same D1 batch, src/search/message-feed.ts); a deleted or expired session's rows go in the same batch as its list
-- entry (src/session/session-index.ts). The rows are an index of the conversation, which lives in the object.
CREATE TABLE message_index (
  id INTEGER PRIMARY KEY,
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  created_at TEXT NOT NULL,
  -- The message's text, its first MESSAGE_INDEX_CHARS characters (src/search/message-feed.ts).
  text TEXT NOT NULL,
  -- Whose it is, as full-text tokens: `o<hash of org and user>` and `g<hash of org>` (src/search/owner-token.ts). A
  -- search matches its owner's token AND the words, so FTS5 intersects the owner's doclist with the words' instead
  -- of ranking every match of every person and filtering afterwards.
  owner TEXT NOT NULL,
  UNIQUE (session_id, seq)
);
-- A person's deletion removes their rows by this index; a session's deletion uses the UNIQUE one above.
CREATE INDEX message_index_by_user ON message_index (org_id, user_id);

-- External content: the text is stored once (above); FTS5 keeps only its index, fed by the triggers below.
CREATE VIRTUAL TABLE message_fts USING fts5(
  owner, text, content = 'message_index', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER message_index_ai AFTER INSERT ON message_index BEGIN
  INSERT INTO message_fts (rowid, owner, text) VALUES (new.id, new.owner, new.text);
END;
CREATE TRIGGER message_index_ad AFTER DELETE ON message_index BEGIN
  INSERT INTO message_fts (message_fts, rowid, owner, text) VALUES ('delete', old.id, old.owner, old.text);
END;
CREATE TRIGGER message_index_au AFTER UPDATE ON message_index BEGIN
  INSERT INTO message_fts (message_fts, rowid, owner, text) VALUES ('delete', old.id, old.owner, old.text);
  INSERT INTO message_fts (rowid, owner, text) VALUES (new.id, new.owner, new.text);
END;

-- The general mode's tools gain conversation_search (appended, as 0031 appends the memory tools; a list that has it
-- already is left as it is).
UPDATE modes SET tools = json_insert(tools, '$[#]', 'conversation_search')
WHERE key = 'general' AND NOT EXISTS (SELECT 1 FROM json_each(modes.tools) WHERE value = 'conversation_search');

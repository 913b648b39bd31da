-- Issue 44: memories. A memory is a short fact about a person (scope 'user', `user_id` the person) or about their
-- org (scope 'org', `user_id` ''), written by the agent's memory_save tool, by the person, or (org ones) by an org
-- admin. D1 rather than a per-user Durable Object: a person's export and deletion, an admin's org-wide view and the
-- org's own memories are queries here, FTS5 is built in, and a turn reads them without a request to another object
-- (docs/memory.md).
CREATE TABLE memories (
  -- The rowid, named: the full-text index refers to rows by it, and a rowid that is not an INTEGER PRIMARY KEY may
  -- change when the database is vacuumed.
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE CHECK (id GLOB 'mem_*'),
  org TEXT NOT NULL CHECK (length(org) > 0),
  user_id TEXT NOT NULL,
  scope TEXT NOT NULL CHECK (scope IN ('user', 'org')),
  text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 500),
  pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  -- Where it came from: the session and turn whose memory_save call wrote it; null for one a person typed in.
  source_session TEXT,
  source_turn TEXT,
  -- Who wrote it (an org memory's admin; the person, or the agent acting for them).
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  CHECK ((scope = 'org') = (user_id = ''))
);
-- A person's list (and the org's, under user_id ''), newest change first; the counts against the limits.
CREATE INDEX memories_by_owner ON memories (org, user_id, updated_at DESC, seq DESC);

-- The full-text index over the memories' text, kept in step by the triggers below (external content: the text is
-- stored once, in `memories`). Porter stemming: "colours" finds "colour".
CREATE VIRTUAL TABLE memories_fts USING fts5(text, content = 'memories', content_rowid = 'seq', tokenize = 'porter unicode61');
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
  INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
END;

-- What an org's admin sets for the whole org (PUT /admin/memory). An org without a row has the defaults.
CREATE TABLE org_settings (
  org TEXT PRIMARY KEY CHECK (length(org) > 0),
  memory_enabled INTEGER NOT NULL DEFAULT 1 CHECK (memory_enabled IN (0, 1)),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Memory per mode: on unless an admin turns it off for the mode.
ALTER TABLE modes ADD COLUMN memory INTEGER NOT NULL DEFAULT 1 CHECK (memory IN (0, 1));

-- The deployment's general mode offers saving and searching memories. Appended, not rewritten: an admin's changes to
-- the list stay (and 0032 appends conversation_search the same way).
UPDATE modes SET tools = json_insert(tools, '$[#]', 'memory_save')
  WHERE org = '' AND key = 'general' AND NOT EXISTS (SELECT 1 FROM json_each(modes.tools) WHERE value = 'memory_save');
UPDATE modes SET tools = json_insert(tools, '$[#]', 'memory_search')
  WHERE org = '' AND key = 'general' AND NOT EXISTS (SELECT 1 FROM json_each(modes.tools) WHERE value = 'memory_search');

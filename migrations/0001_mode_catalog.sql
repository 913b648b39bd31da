-- The agent mode catalog (TUL-010): one row per mode, at most one default.
CREATE TABLE modes (
  id TEXT PRIMARY KEY CHECK (length(id) = 32 AND id NOT GLOB '*[^0-9a-f]*'),
  key TEXT NOT NULL UNIQUE CHECK (length(key) BETWEEN 1 AND 64),
  display_name TEXT NOT NULL CHECK (length(display_name) > 0),
  description TEXT NOT NULL CHECK (length(description) > 0),
  system_prompt_summary TEXT NOT NULL DEFAULT '',
  system_prompt TEXT NOT NULL CHECK (length(system_prompt) > 0),
  is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  human_role_hints TEXT CHECK (human_role_hints IS NULL OR json_valid(human_role_hints)),
  example_utterances TEXT CHECK (example_utterances IS NULL OR json_valid(example_utterances)),
  tools TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tools)),
  approval_required_tools TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(approval_required_tools)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- "At most one default", enforced by the database: only rows with is_default = 1 enter this index.
CREATE UNIQUE INDEX modes_single_default ON modes (is_default) WHERE is_default = 1;

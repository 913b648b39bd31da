-- Mode versions (docs/modes.md, "Versions"): every change of a mode through the admin API bumps `modes.version` and
-- writes the mode as it now is into mode_versions, in the same batch as the change and its audit row. A mode never
-- changed since this migration is at version 1 and has no row yet: its first change writes the version-1 row (from
-- the mode as it was) beside the new one, and the versions list shows the current mode as version 1 until then. The
-- snapshot is the AgentMode as TypeScript parsed it (src/modes/mode-versions.ts), so a field added to modes later
-- (guardrails) comes along without a change here.
ALTER TABLE modes ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
CREATE TABLE mode_versions (
  org TEXT NOT NULL,
  mode_key TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  snapshot TEXT NOT NULL CHECK (json_valid(snapshot)),
  created_at TEXT NOT NULL,
  -- The user who made the change; '' for a version-1 row written lazily (who made the mode is not known).
  created_by TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (org, mode_key, version)
);
-- The version of its mode each agent turn's model call ran with (null: the passthrough, and rows written before).
ALTER TABLE usage_records ADD COLUMN mode_version INTEGER;

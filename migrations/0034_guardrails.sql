-- Issue 45: guardrails (docs/guardrails.md). A mode's own list (JSON, as src/guardrails/guardrail-config.ts parses
-- it; '[]': none), the org's default list with its passthrough switch, and a counter per guardrail, point and action
-- (what fired, never what it matched), which the admin page shows.
ALTER TABLE modes ADD COLUMN guardrails TEXT NOT NULL DEFAULT '[]';

CREATE TABLE org_guardrails (
  org TEXT PRIMARY KEY CHECK (length(org) > 0),
  guardrails TEXT NOT NULL DEFAULT '[]',
  -- 1: the org's input and output guardrails apply to the /v1 passthrough doors too.
  passthrough INTEGER NOT NULL DEFAULT 0 CHECK (passthrough IN (0, 1)),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE guardrail_counts (
  org TEXT NOT NULL,
  guardrail TEXT NOT NULL,
  point TEXT NOT NULL CHECK (point IN ('input', 'output', 'tool_call', 'tool_result')),
  action TEXT NOT NULL CHECK (action IN ('block', 'redact', 'mask', 'flag')),
  count INTEGER NOT NULL DEFAULT 0,
  last_at TEXT NOT NULL,
  PRIMARY KEY (org, guardrail, point, action)
);

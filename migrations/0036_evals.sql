-- Evals on the server (docs/evals.md, "Server-side runs"): an org's datasets (the cases as parsed, a JSON array), and
-- its runs: queued by POST /admin/evals, run by the eval queue's consumer, their results (one EvalResults per version,
-- the comparison's second) kept as JSON. Both are the org's; a dataset is replaced by a new one of the same name.
CREATE TABLE eval_datasets (
  org TEXT NOT NULL,
  name TEXT NOT NULL,
  cases TEXT NOT NULL CHECK (json_valid(cases)),
  case_count INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  PRIMARY KEY (org, name)
);
CREATE TABLE eval_runs (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  mode TEXT NOT NULL,
  -- The version asked for (null: the mode's current one when the run starts), and the one compared with.
  version INTEGER,
  compare INTEGER,
  dataset TEXT NOT NULL,
  -- queued, running, completed (results set) or failed (error set).
  status TEXT NOT NULL,
  results TEXT CHECK (results IS NULL OR json_valid(results)),
  error TEXT,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX eval_runs_org_created ON eval_runs (org, created_at DESC);

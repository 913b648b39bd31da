-- Issue 43: schedules. `schedules` is the list people read (GET /context/schedules) and what each run reads (the
-- prompt, the mode, the session it continues, who it acts as); its ScheduleRunner object (one per schedule, named
-- by its id) owns the timing and mirrors the next run into `next_run_at` for the list. `schedule_runs` is the
-- record of each run: the turn it started, or why it did not (skipped while the session was busy, refused by the
-- budget, the creator's key revoked). A deleted schedule's runs are deleted with it.
CREATE TABLE schedules (
  id TEXT PRIMARY KEY CHECK (id GLOB 'sch_*'),
  org TEXT NOT NULL CHECK (length(org) > 0),
  user_id TEXT NOT NULL,
  -- Who the runs act as: the creator's key (its budget and model call limit) and whether the creator was an admin.
  key_id TEXT NOT NULL,
  admin INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1)),
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
  mode TEXT NOT NULL,
  prompt TEXT NOT NULL CHECK (length(prompt) > 0),
  -- The timing as src/jobs/schedule-timing.ts stores it (kind, its text, the zone, an interval's start).
  timing TEXT NOT NULL CHECK (json_valid(timing)),
  session_id TEXT,
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  next_run_at TEXT,
  last_run_id TEXT,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX schedules_by_owner ON schedules (org, user_id, created_at);

CREATE TABLE schedule_runs (
  id TEXT PRIMARY KEY,
  schedule_id TEXT NOT NULL,
  org TEXT NOT NULL,
  -- The slot it was due at (a run asked for by hand: when it was asked), and when it started or was given up.
  due_at TEXT NOT NULL,
  at TEXT NOT NULL,
  trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  session_id TEXT,
  turn_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('running', 'paused', 'completed', 'failed', 'cancelled', 'skipped')),
  reason TEXT
);
CREATE INDEX schedule_runs_by_schedule ON schedule_runs (schedule_id, at DESC, id DESC);

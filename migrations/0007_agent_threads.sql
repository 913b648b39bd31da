-- Conversations on the agent's OpenAI door (/agent/v1): for each session a client talks to there, per API
-- key, the fingerprint of the transcript after our last answer (its head). A client that resends its whole
-- history continues the session whose head that history ends on; any other history starts a new session.
CREATE TABLE agent_threads (
  session_id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  head TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX agent_threads_key_head ON agent_threads (key_id, head);

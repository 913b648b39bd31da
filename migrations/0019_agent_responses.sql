-- Issue 28: responses of the agent's Responses door (/agent/v1/responses), kept when a request asks to store its
-- response (`store`, true unless set false). Each is tied to the session and turn that answered it, and to the org
-- (another org's id is not found). `head` is the session's head after the response (agent_threads.head): a request
-- whose previous_response_id is the session's latest response continues that session. DELETE hides a response
-- (`deleted_at`); a deleted session takes its responses with it.
CREATE TABLE agent_responses (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  session_id TEXT NOT NULL,
  turn_id TEXT,
  head TEXT,
  response_json TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  deleted_at TEXT
);
CREATE INDEX agent_responses_session ON agent_responses (session_id);

-- Branches a person starts (POST /context/sessions/:id/branches: edit an earlier message, regenerate an answer):
-- the session a branch was started from and the seq there of the user's message it was started before. The console
-- finds a conversation's alternatives by them (GET /context/sessions?branchOf=<id>), so they are indexed by source.
ALTER TABLE session_index ADD COLUMN branch_of_session_id TEXT;
ALTER TABLE session_index ADD COLUMN branch_before_seq INTEGER;
CREATE INDEX session_index_branch_of ON session_index (org, user_id, branch_of_session_id)
  WHERE branch_of_session_id IS NOT NULL;

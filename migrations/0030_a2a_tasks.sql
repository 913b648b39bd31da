-- Issue 43: the A2A door. A task is a turn and its context the turn's session; the turn itself lives in the session's
-- object. A2A asks for a task by its id alone (GetTask, CancelTask, SubscribeToTask) and lists a caller's tasks
-- across their contexts (ListTasks), so each task the door starts is indexed here: which session holds it, and
-- whose it is (the same owner check as the session's).
CREATE TABLE a2a_tasks (
  task_id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX a2a_tasks_by_owner ON a2a_tasks (org, user_id, created_at);
CREATE INDEX a2a_tasks_by_session ON a2a_tasks (session_id, created_at);

-- A task's push notification configs (A2A's CreateTaskPushNotificationConfig) are webhook endpoints, delivered by
-- the same queue, retries and signatures: one told only of its task's turn (a2a_task_id), in A2A's payload, with the
-- token the client gave (sealed by the SecretBox, as the signing secret is) in X-A2A-Notification-Token. They are the
-- A2A door's: /context/webhooks neither lists nor counts them.
ALTER TABLE webhook_endpoints ADD COLUMN a2a_task_id TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN a2a_token_sealed TEXT;
CREATE INDEX webhook_endpoints_by_a2a_task ON webhook_endpoints (a2a_task_id);

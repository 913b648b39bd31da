-- Local development only (npm start); never applied to a remote database.
-- The key `dev-key` (stored as its SHA-256) for org dev-org, user dev-user: an operator (scopes chat, admin and
-- operator), so `npm start` shows everything. Its id, which log lines carry as keyId, is not the key: a log line
-- never shows a usable key.
-- Databases seeded before the id changed held the row under the id 'dev-key': it is replaced.
DELETE FROM api_keys WHERE id = 'dev-key';
INSERT OR IGNORE INTO api_keys (id, key_hash, name, org, user_id, scopes)
VALUES (
  'key_local_dev',
  '7e9f8fd111802be56c379d597842e29b2cebd35ff2133d431a49fa556a18704e',
  'local development key',
  'dev-org',
  'dev-user',
  '["chat","admin","operator"]'
);
-- A database seeded before dev-key was an operator (issue 40) gets the operator's scopes.
UPDATE api_keys SET scopes = '["chat","admin","operator"]' WHERE id = 'key_local_dev';

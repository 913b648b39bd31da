-- Local development only (npm start); never applied to a remote database.
-- The key `dev-key` (stored as its SHA-256) for org dev-org, user dev-user, scopes chat and admin.
INSERT OR IGNORE INTO api_keys (id, key_hash, name, org, user_id, scopes)
VALUES (
  'dev-key',
  '7e9f8fd111802be56c379d597842e29b2cebd35ff2133d431a49fa556a18704e',
  'local development key',
  'dev-org',
  'dev-user',
  '["chat","admin"]'
);

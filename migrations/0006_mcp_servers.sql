-- The registry of remote MCP servers whose tools modes may offer (PUT /admin/mcp-servers/:name). No token is
-- stored: auth_secret is the NAME of a Worker secret or var holding the bearer token.
CREATE TABLE mcp_servers (
  name TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  description TEXT NOT NULL,
  auth_secret TEXT,
  approval TEXT NOT NULL CHECK (approval IN ('always', 'never', 'unless_read_only')),
  -- JSON array of the tool names allowed, or NULL for all the server lists.
  tools TEXT CHECK (tools IS NULL OR json_valid(tools)),
  timeout_ms INTEGER NOT NULL,
  category TEXT,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  -- JSON of the last discovery a session made: {at, toolCount, tools, refused, error}.
  last_discovery TEXT CHECK (last_discovery IS NULL OR json_valid(last_discovery)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

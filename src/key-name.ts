// The one rule for the names an admin gives things: mode keys, model routes and MCP servers are each 1 to 64
// lowercase letters, digits, '_' or '-', starting with a letter.
export const KEY_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

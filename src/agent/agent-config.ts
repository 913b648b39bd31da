// The agent loop's limits and formats: the `agent` part of the settings (src/settings.ts owns them, their
// defaults and their parsing); the loop takes them as a plain object.
import type { Settings } from "../settings";

export type AgentConfig = Settings["agent"];

// The agent's models on its OpenAI door: one per mode of the catalog, `aptix-agent/<mode key>`.
import type { AgentMode } from "../modes/agent-mode";

export const AGENT_MODEL_PREFIX = "aptix-agent/";

export function modelOfMode(mode: AgentMode) {
  return {
    id: `${AGENT_MODEL_PREFIX}${mode.key}`,
    object: "model" as const,
    created: Math.floor(Date.parse(mode.createdAt) / 1000) || 0,
    owned_by: "aptix",
    name: mode.displayName,
    description: mode.description,
  };
}

/** The mode key a model id names, or null when it is not one of ours. */
export function modeKeyOfModel(model: string): string | null {
  return model.startsWith(AGENT_MODEL_PREFIX) ? model.slice(AGENT_MODEL_PREFIX.length) : null;
}

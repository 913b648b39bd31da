// A tool of the client's own, declared in a chat completions request (`tools`) at the agent's OpenAI door:
// an AgentTool under the TUL-011 contract whose preflight checks the arguments against the client's schema
// and whose final step the client carries out (AGN-005: server preflight, client final). The model's call
// reaches the client as OpenAI `tool_calls`; the client's `role: "tool"` message is its result.

import type { AdminLogger } from "../observability/admin-logger";
import type { ChatTool } from "../wire/openai";
import type { ToolCategory } from "./categories";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";
import { PRODUCTION_TOOL_NAMES } from "./index";
import { AgentToolRegistry } from "./registry";

/** The category the client's tools are listed under in the enhanced prompt. */
export const CLIENT_TOOL_CATEGORY: ToolCategory = {
  id: "client",
  name: "Your client's tools",
  description: "Tools the user's own client declared for this conversation; the client carries them out.",
  order: 900,
};

const DESCRIPTION_CHARS = 1_000;

/** The AgentTool of one function the client declared; its exceptions are logged to the context's logger. */
export function clientFunctionTool(declared: ChatTool): AgentTool {
  const { name } = declared.function;
  const said = (declared.function.description ?? "").trim().slice(0, DESCRIPTION_CHARS);
  return defineTool({
    name,
    label: `The client's tool '${name}'`,
    usage: `${said || `The client's tool '${name}'.`} (Carried out by the user's client.)`,
    description: said || name,
    category: CLIENT_TOOL_CATEGORY.id,
    runsOn: "client",
    priority: 60,
    args: { jsonSchema: declared.function.parameters ?? {} },
    blankArguments: "empty",
    // The preflight: the arguments, checked, are the request the client carries out. Made into the result here,
    // so arguments that look like an InvokeResult are still only arguments.
    execute: (args) => InvokeResult.create(JSON.stringify(args)),
  });
}

/**
 * A registry to check a request's client tools in, before any session is reached: their category, and the
 * production tools' names taken (a client's tool may not shadow one), without making the production tools.
 */
export function clientToolRegistry(logger: AdminLogger): AgentToolRegistry {
  return new AgentToolRegistry(logger, [CLIENT_TOOL_CATEGORY], PRODUCTION_TOOL_NAMES);
}

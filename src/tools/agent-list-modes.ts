// agent_list_modes (TUL-010): a read-only list of the configured agent modes for the model.
import { z } from "zod";
import { type AgentMode, toModeSummary } from "../modes/agent-mode";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";

/** TUL-010 §3.1's ToolName. */
export const LIST_MODES_TOOL_NAME = "agent_list_modes";

export const LIST_MODES_MESSAGES = {
  failed: "AgentListModesTool could not read the mode catalog.",
  noCatalog: "AgentListModesTool got no answer from the mode catalog.",
} as const;

const AgentListModesArgs = z.object({
  includeExamples: z
    .boolean({ error: "AgentListModesTool requires 'includeExamples' to be a boolean when it is given." })
    .optional()
    .describe("true to include example user requests for each mode; false or omitted to leave them out."),
});

/** TUL-010's AgentListModesTool, given the mode catalog (IAgentModeCatalogService) and its logger. */
export function agentListModesTool(catalog: AgentModeCatalogService, logger: AdminLogger): AgentTool {
  return defineTool({
    name: LIST_MODES_TOOL_NAME,
    label: "AgentListModesTool",
    /** TUL-010 §5. */
    usage:
      "Use this tool to list the agent modes that exist and what each is for. Call it when the user asks " +
      "what modes are available, wants help understanding or choosing between modes, or when you are about " +
      "to propose a mode change and want to present the options with their descriptions. Do not call it on " +
      "every user message, do not call it when you already know your mode and need no options, and do not " +
      "use it instead of agent_change_mode: it only reads the catalog and changes nothing.",
    description:
      "Returns the read-only catalog of agent modes (key, name, description, prompt summary, default flag, role hints and, optionally, example requests).",
    category: "session",
    runsOn: "server",
    // It only reads the catalog.
    repeatable: true,
    priority: 100,
    args: AgentListModesArgs,
    /** No argument is required: empty arguments read as `{}`. */
    blankArguments: "empty",
    failureMessage: LIST_MODES_MESSAGES.failed,
    logger,
    execute: async (args, context, signal) => {
      // TUL-010 §4.3: a catalog that hands back null (or throws) is a failure; an empty catalog is an answer.
      const modes: AgentMode[] | null | undefined = await catalog.getAllModes(signal);
      if (!Array.isArray(modes)) {
        logger.addError("[agent_list_modes_ExecuteAsync]", "The mode catalog returned null.", [
          ["SessionId", context?.sessionId ?? ""],
          ["ConversationId", context?.conversationId ?? ""],
        ]);
        return InvokeResult.fromError(LIST_MODES_MESSAGES.noCatalog);
      }
      return { modes: modes.map((mode) => toModeSummary(mode, args.includeExamples === true)) };
    },
  });
}

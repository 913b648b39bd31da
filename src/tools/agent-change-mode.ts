// agent_change_mode (TUL-007): the model's one way to persist a mode change for the current session.
import { z } from "zod";
import type { AdminLogger } from "../observability/admin-logger";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";
import type { AgentSessionManager } from "./session-manager";
import { isBlank, nonBlankString } from "./tool-arguments";

/** TUL-007 §3.1's ToolName. */
export const MODE_CHANGE_TOOL_NAME = "agent_change_mode";

export const MODE_CHANGE_MESSAGES = {
  emptyArguments: "ModeChangeTool requires a non-empty arguments object.",
  missingContext: "ModeChangeTool requires a valid execution context.",
  missingSessionId: "ModeChangeTool cannot change mode because the session id is missing.",
  missingMode: "ModeChangeTool requires a non-empty 'mode' string.",
  missingBranch: "ModeChangeTool requires a 'branch' boolean flag.",
  missingReason: "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed.",
  failed: "ModeChangeTool failed to change the session mode.",
} as const;

/** TUL-007 §3.3, fields in §3.4's validation order. sessionId, org and user are refused: they come from the context. */
const ModeChangeArgs = z.strictObject(
  {
    mode: nonBlankString(MODE_CHANGE_MESSAGES.missingMode).describe(
      "Key of the mode to switch this session to, as listed by agent_list_modes (for example 'ddr_authoring').",
    ),
    branch: z
      .boolean({ error: MODE_CHANGE_MESSAGES.missingBranch })
      .describe(
        "false: switch this session and keep working in it. true: switch, and start the new work as a new session in that mode.",
      ),
    reason: nonBlankString(MODE_CHANGE_MESSAGES.missingReason).describe(
      "Short explanation of why the new mode fits the user's request.",
    ),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `ModeChangeTool does not accept ${issue.keys.map((k) => `'${k}'`).join(", ")} in its arguments; the session, org and user come from the execution context.`
        : undefined,
  },
);

interface ModeChangeResult {
  success: boolean;
  mode: string;
  branch: boolean;
  reason: string;
}

/**
 * TUL-007's ModeChangeTool, given its session manager and logger (§3.2: both required and non-null, checked at
 * run time too). Blank arguments are refused with MODE_CHANGE_MESSAGES.emptyArguments (the label's wording).
 */
export function modeChangeTool(sessionManager: AgentSessionManager, logger: AdminLogger): AgentTool {
  if (sessionManager === null || sessionManager === undefined) {
    throw new TypeError("ModeChangeTool requires a non-null sessionManager (TUL-007 §3.2).");
  }
  if (logger === null || logger === undefined) {
    throw new TypeError("ModeChangeTool requires a non-null logger (TUL-007 §3.2).");
  }
  return defineTool({
    name: MODE_CHANGE_TOOL_NAME,
    label: "ModeChangeTool",
    /** TUL-007 §5.2. */
    usage:
      "Use this tool to change the current agent session mode, but only after the user " +
      "has explicitly agreed to switch. First, propose a specific target mode and ask " +
      "whether the user wants to (1) stay in the current mode, (2) switch this session " +
      "to that mode, or (3) switch and start a new session. " +
      "Call this tool only for options (2) or (3): use branch=false for switching the " +
      "current session, and branch=true when the user wants to switch and start a new session.",
    /** TUL-007 §5.3. */
    description:
      "Changes the mode for the current agent session to the specified mode string. Call only after the user confirms a mode change, and provide a short 'reason' describing why this mode fits the current request. Set branch=true when the user wants the new work to start as a separate session.",
    category: "session",
    runsOn: "server",
    /** TUL-007 §3.1: never trimmed from the prompt, whatever the mode or budget. */
    priority: 100,
    args: ModeChangeArgs,
    failureMessage: MODE_CHANGE_MESSAGES.failed,
    logger,
    /** TUL-007 §3.4: the context is checked after the arguments' presence and before their fields. */
    checkContext: (context) => {
      if (!context) return MODE_CHANGE_MESSAGES.missingContext;
      if (isBlank(context.sessionId)) {
        logger.addError("[agent_change_mode_ExecuteAsync]", "Mode change requested without a session id.", [
          ["ConversationId", context.conversationId ?? ""],
        ]);
        return MODE_CHANGE_MESSAGES.missingSessionId;
      }
      return null;
    },
    /** TUL-007 §3.5's one side effect; the mode change (and any branch) is the loop's to apply, as an effect. */
    execute: async (args, context) => {
      if (!context) return InvokeResult.fromError(MODE_CHANGE_MESSAGES.missingContext);
      await sessionManager.setSessionMode(context.sessionId, args.mode, args.reason, context.org, context.user);
      const result: ModeChangeResult = { success: true, mode: args.mode, branch: args.branch, reason: args.reason };
      return InvokeResult.create(JSON.stringify(result), [
        { type: "mode_changed", to: args.mode, reason: args.reason, branch: args.branch },
      ]);
    },
  });
}

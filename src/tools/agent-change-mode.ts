// agent_change_mode (TUL-007): the model's one way to persist a mode change for the current session.
import { z } from "zod";
import type { AdminLogger } from "../observability/admin-logger";
import type { AgentSessionManager } from "../session/session-manager";
import { type AgentToolExecutionContext, InvokeResult, type OpenAIFunctionToolSchema } from "./contract";
import { functionToolSchema } from "./function-schema";
import { isBlank, nonBlank } from "./tool-arguments";
import { TypedAgentTool } from "./tool-base";

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
    mode: z
      .string({ error: MODE_CHANGE_MESSAGES.missingMode })
      .refine(nonBlank, { error: MODE_CHANGE_MESSAGES.missingMode })
      .describe(
        "Key of the mode to switch this session to, as listed by agent_list_modes (for example 'ddr_authoring').",
      ),
    branch: z
      .boolean({ error: MODE_CHANGE_MESSAGES.missingBranch })
      .describe(
        "false: switch this session and keep working in it. true: switch, and start the new work as a new session in that mode.",
      ),
    reason: z
      .string({ error: MODE_CHANGE_MESSAGES.missingReason })
      .refine(nonBlank, { error: MODE_CHANGE_MESSAGES.missingReason })
      .describe("Short explanation of why the new mode fits the user's request."),
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

export class ModeChangeTool extends TypedAgentTool<typeof ModeChangeArgs> {
  static readonly ToolName = "agent_change_mode";

  /** TUL-007 §5.2. */
  static readonly ToolUsageMetadata =
    "Use this tool to change the current agent session mode, but only after the user " +
    "has explicitly agreed to switch. First, propose a specific target mode and ask " +
    "whether the user wants to (1) stay in the current mode, (2) switch this session " +
    "to that mode, or (3) switch and start a new session. " +
    "Call this tool only for options (2) or (3): use branch=false for switching the " +
    "current session, and branch=true when the user wants to switch and start a new session.";

  /** TUL-007 §5.3. */
  static readonly SchemaDescription =
    "Changes the mode for the current agent session to the specified mode string. Call only after the user confirms a mode change, and provide a short 'reason' describing why this mode fits the current request. Set branch=true when the user wants the new work to start as a separate session.";

  static getSchema(): OpenAIFunctionToolSchema {
    return functionToolSchema(ModeChangeTool.ToolName, ModeChangeTool.SchemaDescription, ModeChangeArgs);
  }

  readonly category = "session";
  readonly isToolFullyExecutedOnServer = true;
  /** TUL-007 §3.1: never trimmed from the prompt, whatever the mode or budget. */
  override readonly priority = 100;
  protected readonly argumentsSchema = ModeChangeArgs;
  protected readonly label = "ModeChangeTool";
  protected readonly failureMessage = MODE_CHANGE_MESSAGES.failed;

  private readonly sessionManager: AgentSessionManager;

  /** TUL-007 §3.2: both parameters are required and must be non-null, checked at run time too. */
  constructor(sessionManager: AgentSessionManager, logger: AdminLogger) {
    if (sessionManager === null || sessionManager === undefined) {
      throw new TypeError("ModeChangeTool requires a non-null sessionManager (TUL-007 §3.2).");
    }
    if (logger === null || logger === undefined) {
      throw new TypeError("ModeChangeTool requires a non-null logger (TUL-007 §3.2).");
    }
    super(logger);
    this.sessionManager = sessionManager;
  }

  /** TUL-007 §3.4: the context is checked after the arguments' presence and before their fields. */
  protected override checkContext(context: AgentToolExecutionContext | null | undefined): string | null {
    if (!context) return MODE_CHANGE_MESSAGES.missingContext;
    if (isBlank(context.sessionId)) {
      this.logger.addError("[agent_change_mode_ExecuteAsync]", "Mode change requested without a session id.", [
        ["ConversationId", context.conversationId ?? ""],
      ]);
      return MODE_CHANGE_MESSAGES.missingSessionId;
    }
    return null;
  }

  /** TUL-007 §3.5's one side effect; the mode change (and any branch) is the loop's to apply, as an effect. */
  protected async runWith(
    args: z.output<typeof ModeChangeArgs>,
    context: AgentToolExecutionContext | null | undefined,
  ): Promise<InvokeResult<string>> {
    if (!context) return InvokeResult.fromError(MODE_CHANGE_MESSAGES.missingContext);
    await this.sessionManager.setSessionMode(context.sessionId, args.mode, args.reason, context.org, context.user);
    const result: ModeChangeResult = { success: true, mode: args.mode, branch: args.branch, reason: args.reason };
    return InvokeResult.create(JSON.stringify(result), [
      { type: "mode_changed", to: args.mode, reason: args.reason, branch: args.branch },
    ]);
  }
}

// agent_list_modes (TUL-010): a read-only list of the configured agent modes for the model.
import { z } from "zod";
import { type AgentMode, toModeSummary } from "../modes/agent-mode";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { type AgentToolExecutionContext, InvokeResult, type OpenAIFunctionToolSchema } from "./contract";
import { functionToolSchema } from "./function-schema";
import { TypedAgentTool } from "./tool-base";

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

export class AgentListModesTool extends TypedAgentTool<typeof AgentListModesArgs> {
  static readonly ToolName = "agent_list_modes";

  /** TUL-010 §5. */
  static readonly ToolUsageMetadata =
    "Use this tool to list the agent modes that exist and what each is for. Call it when the user asks " +
    "what modes are available, wants help understanding or choosing between modes, or when you are about " +
    "to propose a mode change and want to present the options with their descriptions. Do not call it on " +
    "every user message, do not call it when you already know your mode and need no options, and do not " +
    "use it instead of agent_change_mode: it only reads the catalog and changes nothing.";

  static getSchema(): OpenAIFunctionToolSchema {
    return functionToolSchema(
      AgentListModesTool.ToolName,
      "Returns the read-only catalog of agent modes (key, name, description, prompt summary, default flag, role hints and, optionally, example requests).",
      AgentListModesArgs,
    );
  }

  readonly category = "session";
  readonly isToolFullyExecutedOnServer = true;
  override readonly priority = 100;
  protected readonly argumentsSchema = AgentListModesArgs;
  protected readonly label = "AgentListModesTool";
  /** No argument is required: empty arguments read as `{}`. */
  protected override readonly blankArguments = "empty";
  protected readonly failureMessage = LIST_MODES_MESSAGES.failed;

  constructor(
    private readonly catalog: AgentModeCatalogService,
    logger: AdminLogger,
  ) {
    super(logger);
  }

  protected async runWith(
    args: z.output<typeof AgentListModesArgs>,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>> {
    const includeExamples = args.includeExamples === true;

    // TUL-010 §4.3: a catalog that hands back null (or throws) is a failure; an empty catalog is an answer.
    const modes: AgentMode[] | null | undefined = await this.catalog.getAllModes(signal);
    if (!Array.isArray(modes)) {
      this.logger.addError("[agent_list_modes_ExecuteAsync]", "The mode catalog returned null.", [
        ["SessionId", context?.sessionId ?? ""],
        ["ConversationId", context?.conversationId ?? ""],
      ]);
      return InvokeResult.fromError(LIST_MODES_MESSAGES.noCatalog);
    }
    const payload = { modes: modes.map((mode) => toModeSummary(mode, includeExamples)) };
    return InvokeResult.create(JSON.stringify(payload));
  }
}

// agent_hello_world (TUL-011 §6): the canonical minimal tool, a personalised greeting.
import { z } from "zod";
import { type AgentToolExecutionContext, InvokeResult, type OpenAIFunctionToolSchema } from "./contract";
import { functionToolSchema } from "./function-schema";
import { nonBlank } from "./tool-arguments";
import { TypedAgentTool } from "./tool-base";

export const HELLO_WORLD_MESSAGES = {
  emptyArguments: "HelloWorldTool requires a non-empty arguments object.",
  missingName: "HelloWorldTool requires a non-empty 'name' string.",
  failed: "HelloWorldTool failed to create a greeting.",
} as const;

const HelloWorldArgs = z.object({
  name: z
    .string({ error: HELLO_WORLD_MESSAGES.missingName })
    .refine(nonBlank, { error: HELLO_WORLD_MESSAGES.missingName })
    .describe("The name of the person to greet."),
});

interface HelloWorldResult {
  message: string;
  conversationId: string;
  sessionId: string;
}

export class HelloWorldTool extends TypedAgentTool<typeof HelloWorldArgs> {
  static readonly ToolName = "agent_hello_world";

  static readonly ToolUsageMetadata =
    "Use this tool to generate a personalized greeting when the user asks to be greeted or welcomed. " +
    "Pass the user's name; do not call it for any other purpose.";

  static getSchema(): OpenAIFunctionToolSchema {
    return functionToolSchema(
      HelloWorldTool.ToolName,
      "Creates a friendly greeting using the user's name.",
      HelloWorldArgs,
    );
  }

  readonly category = "general";
  readonly isToolFullyExecutedOnServer = true;
  override readonly priority = 10;
  protected readonly argumentsSchema = HelloWorldArgs;
  protected readonly label = "HelloWorldTool";
  protected readonly failureMessage = HELLO_WORLD_MESSAGES.failed;

  protected async runWith(
    args: z.output<typeof HelloWorldArgs>,
    context: AgentToolExecutionContext | null | undefined,
  ): Promise<InvokeResult<string>> {
    const result: HelloWorldResult = {
      message: `Hello, ${args.name.trim()}! Welcome to Aptix.`,
      conversationId: context?.conversationId ?? "",
      sessionId: context?.sessionId ?? "",
    };
    return InvokeResult.create(JSON.stringify(result));
  }
}

// A tool of the client's own, declared in a chat completions request (`tools`) at the agent's OpenAI door:
// an AgentTool under the TUL-011 contract whose preflight checks the arguments against the client's schema
// and whose final step the client carries out (AGN-005: server preflight, client final). The model's call
// reaches the client as OpenAI `tool_calls`; the client's `role: "tool"` message is its result.
import type { ChatTool } from "../llm/chat-model";
import type { ToolCategory } from "./categories";
import { type AgentTool, InvokeResult, type OpenAIFunctionToolSchema } from "./contract";
import { foreignFunctionSchema, readForeignArguments } from "./foreign-schema";

/** The category the client's tools are listed under in the enhanced prompt. */
export const CLIENT_TOOL_CATEGORY: ToolCategory = {
  id: "client",
  name: "Your client's tools",
  description: "Tools the user's own client declared for this conversation; the client carries them out.",
  order: 900,
};

const DESCRIPTION_CHARS = 1_000;

/** The AgentTool of one function the client declared (a class per tool: TUL-011's statics are per class). */
export function clientFunctionTool(declared: ChatTool): AgentTool {
  const { name } = declared.function;
  const said = (declared.function.description ?? "").trim().slice(0, DESCRIPTION_CHARS);
  const usage = `${said || `The client's tool '${name}'.`} (Carried out by the user's client.)`;
  const parameters = declared.function.parameters ?? {};
  const schema = foreignFunctionSchema(name, said || name, parameters);
  const label = `The client's tool '${name}'`;
  const check = (argumentsJson: string) => readForeignArguments(label, argumentsJson, parameters);

  return new (class ClientFunctionTool implements AgentTool {
    static readonly ToolName = name;
    static readonly ToolUsageMetadata = usage;
    static getSchema(): OpenAIFunctionToolSchema {
      return structuredClone(schema);
    }
    readonly name = name;
    readonly toolUsageMetadata = usage;
    readonly category = CLIENT_TOOL_CATEGORY.id;
    readonly isToolFullyExecutedOnServer = false;
    readonly requiresApproval = false;
    readonly priority = 60;

    getSchema(): OpenAIFunctionToolSchema {
      return structuredClone(schema);
    }

    checkArguments(argumentsJson: string): string | null {
      const read = check(argumentsJson);
      return "problem" in read ? read.problem : null;
    }

    /** The preflight: the arguments, checked, are the request the client carries out. */
    async execute(argumentsJson: string | null | undefined): Promise<InvokeResult<string>> {
      const read = check(argumentsJson ?? "");
      if ("problem" in read) return InvokeResult.fromError(read.problem);
      return InvokeResult.create(JSON.stringify(read.args));
    }
  })();
}

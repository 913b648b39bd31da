// workspace_read_file: a client-final tool; the server checks the path and size, the user's client reads.
import { z } from "zod";
import { InvokeResult, type OpenAIFunctionToolSchema } from "./contract";
import { functionToolSchema } from "./function-schema";
import { checkWorkspacePath, MAX_WORKSPACE_FILE_BYTES } from "./workspace-path";
import { WorkspaceTool } from "./workspace-tool";

const DEFAULT_MAX_BYTES = 262_144;

const WorkspaceReadFileArgs = z.strictObject({
  path: z
    .string({ error: "WorkspaceReadFileTool requires a 'path' string." })
    .describe("Path of the file relative to the workspace root, for example 'src/index.ts'."),
  maxBytes: z
    .number({ error: "WorkspaceReadFileTool requires 'maxBytes' to be a number when it is given." })
    .int("WorkspaceReadFileTool requires 'maxBytes' to be a whole number.")
    .min(1, "WorkspaceReadFileTool requires 'maxBytes' of at least 1.")
    .max(MAX_WORKSPACE_FILE_BYTES, `WorkspaceReadFileTool reads at most ${MAX_WORKSPACE_FILE_BYTES} bytes at a time.`)
    .optional()
    .describe(`Largest number of bytes to read (default ${DEFAULT_MAX_BYTES}, at most ${MAX_WORKSPACE_FILE_BYTES}).`),
});

/** What the client sends back once it has read the file. */
export const WorkspaceReadFileResult = z.strictObject({
  path: z.string(),
  content: z.string(),
  truncated: z.boolean().optional(),
});

export class WorkspaceReadFileTool extends WorkspaceTool<typeof WorkspaceReadFileArgs> {
  static readonly ToolName = "workspace_read_file";
  static readonly ToolUsageMetadata =
    "Use this tool to read a text file from the user's workspace before you explain or change it. " +
    "The user's client reads the file and sends back its content. Use a path relative to the workspace root; " +
    "absolute paths and '..' are refused. Read only the files the request needs.";

  static getSchema(): OpenAIFunctionToolSchema {
    return functionToolSchema(
      WorkspaceReadFileTool.ToolName,
      "Reads a text file from the user's workspace (executed by the user's client).",
      WorkspaceReadFileArgs,
    );
  }

  override readonly priority = 60;
  readonly clientResultSchema = WorkspaceReadFileResult;
  protected readonly argumentsSchema = WorkspaceReadFileArgs;
  protected readonly label = "WorkspaceReadFileTool";
  protected readonly failureMessage = "WorkspaceReadFileTool failed to prepare the read.";

  protected async runWith(args: z.output<typeof WorkspaceReadFileArgs>): Promise<InvokeResult<string>> {
    const path = checkWorkspacePath(args.path, this.policy);
    if (!path.ok) return InvokeResult.fromError(`WorkspaceReadFileTool refused the path: ${path.message}.`);
    const request = { action: "read_file", path: path.path, maxBytes: args.maxBytes ?? DEFAULT_MAX_BYTES };
    return InvokeResult.create(JSON.stringify(request));
  }
}

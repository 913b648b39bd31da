// workspace_write_file: a client-final tool that needs approval; the server checks, the client writes.
import { z } from "zod";
import { InvokeResult, type OpenAIFunctionToolSchema } from "./contract";
import { functionToolSchema } from "./function-schema";
import { checkWorkspacePath, MAX_WORKSPACE_FILE_BYTES } from "./workspace-path";
import { WorkspaceTool } from "./workspace-tool";

const WorkspaceWriteFileArgs = z.strictObject({
  path: z
    .string({ error: "WorkspaceWriteFileTool requires a 'path' string." })
    .describe("Path of the file relative to the workspace root; it is created or replaced."),
  content: z
    .string({ error: "WorkspaceWriteFileTool requires a 'content' string." })
    .describe("The whole new content of the file."),
});

/** What the client sends back once it has written the file. */
export const WorkspaceWriteFileResult = z.strictObject({
  path: z.string(),
  bytesWritten: z.number().int().min(0),
});

export class WorkspaceWriteFileTool extends WorkspaceTool<typeof WorkspaceWriteFileArgs> {
  static readonly ToolName = "workspace_write_file";
  static readonly ToolUsageMetadata =
    "Use this tool to create or replace a text file in the user's workspace after you have read it (when it " +
    "exists) and explained the change. Every write waits for the user's approval and is then carried out by the " +
    "user's client. Send the whole new content; use a path relative to the workspace root.";

  static getSchema(): OpenAIFunctionToolSchema {
    return functionToolSchema(
      WorkspaceWriteFileTool.ToolName,
      "Creates or replaces a text file in the user's workspace (needs approval; executed by the user's client).",
      WorkspaceWriteFileArgs,
    );
  }

  override readonly requiresApproval = true;
  override readonly priority = 55;
  readonly clientResultSchema = WorkspaceWriteFileResult;
  protected readonly argumentsSchema = WorkspaceWriteFileArgs;
  protected readonly label = "WorkspaceWriteFileTool";
  protected readonly failureMessage = "WorkspaceWriteFileTool failed to prepare the write.";

  protected async runWith(args: z.output<typeof WorkspaceWriteFileArgs>): Promise<InvokeResult<string>> {
    const path = checkWorkspacePath(args.path, this.policy);
    if (!path.ok) return InvokeResult.fromError(`WorkspaceWriteFileTool refused the path: ${path.message}.`);
    const bytes = new TextEncoder().encode(args.content).byteLength;
    if (bytes > MAX_WORKSPACE_FILE_BYTES) {
      return InvokeResult.fromError(
        `WorkspaceWriteFileTool writes at most ${MAX_WORKSPACE_FILE_BYTES} bytes; this content has ${bytes}.`,
      );
    }
    return InvokeResult.create(JSON.stringify({ action: "write_file", path: path.path, content: args.content, bytes }));
  }
}

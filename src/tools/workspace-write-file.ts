// workspace_write_file: a client-final tool that needs approval; the server checks, the client writes.
import { z } from "zod";
import type { AdminLogger } from "../observability/admin-logger";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";
import {
  checkResultPath,
  checkWorkspacePath,
  DEFAULT_WORKSPACE_POLICY,
  MAX_WORKSPACE_FILE_BYTES,
  type WorkspacePolicy,
} from "./workspace-path";

export const WORKSPACE_WRITE_FILE_TOOL_NAME = "workspace_write_file";

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

/** Refuses the paths `policy` protects (WORKSPACE_PROTECTED_PATHS). */
export function workspaceWriteFileTool(
  logger: AdminLogger,
  policy: WorkspacePolicy = DEFAULT_WORKSPACE_POLICY,
): AgentTool {
  return defineTool({
    name: WORKSPACE_WRITE_FILE_TOOL_NAME,
    label: "WorkspaceWriteFileTool",
    usage:
      "Use this tool to create or replace a text file in the user's workspace after you have read it (when it " +
      "exists) and explained the change. Every write waits for the user's approval and is then carried out by the " +
      "user's client. Send the whole new content; use a path relative to the workspace root.",
    description:
      "Creates or replaces a text file in the user's workspace (needs approval; executed by the user's client).",
    category: "workspace",
    runsOn: "client",
    needsApproval: true,
    priority: 55,
    args: WorkspaceWriteFileArgs,
    clientResult: WorkspaceWriteFileResult,
    checkClientResult: checkResultPath,
    failureMessage: "WorkspaceWriteFileTool failed to prepare the write.",
    logger,
    execute: (args) => {
      const path = checkWorkspacePath(args.path, policy);
      if (!path.ok) return InvokeResult.fromError(`WorkspaceWriteFileTool refused the path: ${path.message}.`);
      const bytes = new TextEncoder().encode(args.content).byteLength;
      if (bytes > MAX_WORKSPACE_FILE_BYTES) {
        return InvokeResult.fromError(
          `WorkspaceWriteFileTool writes at most ${MAX_WORKSPACE_FILE_BYTES} bytes; this content has ${bytes}.`,
        );
      }
      return { action: "write_file", path: path.path, content: args.content, bytes };
    },
  });
}

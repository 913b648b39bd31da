// workspace_read_file: a client-final tool; the server checks the path and size, the user's client reads.
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

export const WORKSPACE_READ_FILE_TOOL_NAME = "workspace_read_file";

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

/** Refuses the paths `policy` protects (WORKSPACE_PROTECTED_PATHS). */
export function workspaceReadFileTool(
  logger: AdminLogger,
  policy: WorkspacePolicy = DEFAULT_WORKSPACE_POLICY,
): AgentTool {
  return defineTool({
    name: WORKSPACE_READ_FILE_TOOL_NAME,
    label: "WorkspaceReadFileTool",
    usage:
      "Use this tool to read a text file from the user's workspace before you explain or change it. " +
      "The user's client reads the file and sends back its content. Use a path relative to the workspace root; " +
      "absolute paths and '..' are refused. Read only the files the request needs.",
    description: "Reads a text file from the user's workspace (executed by the user's client).",
    category: "workspace",
    runsOn: "client",
    priority: 60,
    args: WorkspaceReadFileArgs,
    clientResult: WorkspaceReadFileResult,
    checkClientResult: checkResultPath,
    failureMessage: "WorkspaceReadFileTool failed to prepare the read.",
    logger,
    execute: (args) => {
      const path = checkWorkspacePath(args.path, policy);
      if (!path.ok) return InvokeResult.fromError(`WorkspaceReadFileTool refused the path: ${path.message}.`);
      return { action: "read_file", path: path.path, maxBytes: args.maxBytes ?? DEFAULT_MAX_BYTES };
    },
  });
}

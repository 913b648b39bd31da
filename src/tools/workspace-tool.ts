// What the client-final workspace tools share: the path policy they check against, and the check that a
// client's result answers the file that was asked for.

import type { z } from "zod";
import type { AdminLogger } from "../observability/admin-logger";
import { quoted } from "../quote";
import { TypedAgentTool } from "./tool-base";
import { checkWorkspacePath, DEFAULT_WORKSPACE_POLICY, type WorkspacePolicy } from "./workspace-path";

export abstract class WorkspaceTool<S extends z.ZodType> extends TypedAgentTool<S> {
  readonly category = "workspace";
  readonly isToolFullyExecutedOnServer = false;

  constructor(
    logger: AdminLogger,
    protected readonly policy: WorkspacePolicy = DEFAULT_WORKSPACE_POLICY,
  ) {
    super(logger);
  }

  /** A result whose `path` (normalised like the request's) is not the prepared request's path is refused. */
  checkClientResult(preparedJson: string, result: unknown): string | null {
    const prepared: unknown = JSON.parse(preparedJson);
    const asked = typeof prepared === "object" && prepared !== null && "path" in prepared ? prepared.path : undefined;
    const answered = typeof result === "object" && result !== null && "path" in result ? result.path : undefined;
    if (typeof asked !== "string" || typeof answered !== "string") return "does not name the path it is for";
    const normalised = checkWorkspacePath(answered, { protectedPaths: [] });
    if (normalised.ok && normalised.path === asked) return null;
    return `is for ${quoted(answered)}, not for ${quoted(asked)}, the path that was asked for`;
  }
}

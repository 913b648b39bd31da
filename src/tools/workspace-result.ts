// What the workspace tools check of a client's result beyond its schema: that it answers the file asked for.
import { quoted } from "../quote";
import { checkWorkspacePath } from "./workspace-path";

/** A result whose `path` (normalised like the request's) is not the prepared request's path is refused. */
export function clientResultPathProblem(preparedJson: string, result: unknown): string | null {
  const prepared: unknown = JSON.parse(preparedJson);
  const asked = typeof prepared === "object" && prepared !== null && "path" in prepared ? prepared.path : undefined;
  const answered = typeof result === "object" && result !== null && "path" in result ? result.path : undefined;
  if (typeof asked !== "string" || typeof answered !== "string") return "does not name the path it is for";
  const normalised = checkWorkspacePath(answered, { protectedPaths: [] });
  if (normalised.ok && normalised.path === asked) return null;
  return `is for ${quoted(answered)}, not for ${quoted(asked)}, the path that was asked for`;
}

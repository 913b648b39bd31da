// Workspace paths for client-executed file tools: relative to the workspace root, never escaping it.

export const MAX_WORKSPACE_FILE_BYTES = 1_048_576;

/** Returns the normalised relative path, or why it is refused. */
export function checkWorkspacePath(path: string): { ok: true; path: string } | { ok: false; message: string } {
  const trimmed = path.trim();
  if (trimmed.length === 0) return { ok: false, message: "the path is empty" };
  if (trimmed.length > 1024) return { ok: false, message: "the path is longer than 1024 characters" };
  if (trimmed.includes("\0")) return { ok: false, message: "the path contains a NUL character" };
  if (/^([/\\]|[a-zA-Z]:|~)/.test(trimmed)) {
    return { ok: false, message: `'${trimmed}' is absolute; use a path relative to the workspace root` };
  }
  const segments = trimmed.split(/[/\\]+/).filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) return { ok: false, message: `'${trimmed}' leaves the workspace ('..' is not allowed)` };
  if (segments.length === 0) return { ok: false, message: `'${trimmed}' names the workspace root, not a file` };
  return { ok: true, path: segments.join("/") };
}

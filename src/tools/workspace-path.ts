// Workspace paths for client-executed file tools: normalised first (percent-decoding, NFKC), then refused
// when they leave or confuse the workspace (any spelling of '..', absolute, drive and UNC paths, URIs, '~',
// control and invisible characters) or name a file that holds secrets (WORKSPACE_PROTECTED_PATHS); and the
// check that a client's result is for the path that was asked for.
import { quoted } from "../quote";
import { DEFAULT_PROTECTED_PATHS } from "../settings";

export const MAX_WORKSPACE_FILE_BYTES = 1_048_576;
const MAX_PATH_CHARS = 1024;

export interface WorkspacePolicy {
  protectedPaths: readonly string[];
}

export const DEFAULT_WORKSPACE_POLICY: WorkspacePolicy = { protectedPaths: DEFAULT_PROTECTED_PATHS };

type Checked = { ok: true; path: string } | { ok: false; message: string };

/**
 * Control characters (Cc) and format characters (Cf: zero-width, soft hyphen, direction overrides, BOM):
 * the invisible ones that make a path read as another.
 */
const CONFUSING = /[\p{Cc}\p{Cf}]/u;
const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/** Decodes %XX escapes until none is left (a double-encoded '%252e' is a '.' too); null when malformed. */
function percentDecoded(path: string): string | null {
  let current = path;
  for (let round = 0; round < 4 && /%[0-9a-fA-F]{2}/.test(current); round++) {
    try {
      current = decodeURIComponent(current);
    } catch {
      return null;
    }
  }
  return current;
}

function globMatches(pattern: string, name: string): boolean {
  const source = pattern
    .toLowerCase()
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`).test(name.toLowerCase());
}

function protectedBy(segments: string[], policy: WorkspacePolicy): string | null {
  const directories = segments.slice(0, -1);
  const file = segments.at(-1) ?? "";
  for (const pattern of policy.protectedPaths) {
    if (pattern.endsWith("/")) {
      const dir = pattern.slice(0, -1);
      if (directories.some((d) => globMatches(dir, d)) || globMatches(dir, file)) return pattern;
    } else if (segments.some((s) => globMatches(pattern, s))) return pattern;
  }
  return null;
}

/** The normalised path relative to the workspace root, or why it is refused. */
export function checkWorkspacePath(raw: string, policy: WorkspacePolicy = DEFAULT_WORKSPACE_POLICY): Checked {
  const refuse = (why: string): Checked => ({ ok: false, message: `${quoted(raw)} ${why}` });
  if (raw.length > MAX_PATH_CHARS)
    return { ok: false, message: `the path is longer than ${MAX_PATH_CHARS} characters` };
  const decoded = percentDecoded(raw);
  if (decoded === null) return refuse("has a malformed percent-escape");
  const path = decoded.normalize("NFKC").trim();
  if (path.length === 0) return { ok: false, message: "the path is empty" };
  if (path.includes("\0")) return refuse("contains a NUL character");
  if (CONFUSING.test(path)) return refuse("contains control or invisible characters");
  if (/^[/\\]/.test(path)) return refuse("is absolute; use a path relative to the workspace root");
  if (/^[a-zA-Z]:/.test(path)) return refuse("names a drive; use a path relative to the workspace root");
  if (SCHEME.test(path)) return refuse("is a URI; use a path relative to the workspace root");
  if (path.startsWith("~")) return refuse("names a home directory; use a path relative to the workspace root");
  const segments = path.split(/[/\\]+/).filter((s) => s !== "" && s !== ".");
  // '..' in any spelling that survives normalisation, and names a file system reads as '..' ('.. ', '...').
  if (segments.some((s) => s.includes("..") && s.replace(/[. ]+$/, "") === "")) {
    return refuse("leaves the workspace ('..' is not allowed)");
  }
  if (segments.some((s) => s.replace(/[. ]+$/, "") === "")) return refuse("has a name made only of dots or spaces");
  if (segments.length === 0) return refuse("names the workspace root, not a file");
  const normalised = segments.join("/");
  const rule = protectedBy(segments, policy);
  if (rule) return refuse(`is protected (it matches '${rule}' in WORKSPACE_PROTECTED_PATHS)`);
  return { ok: true, path: normalised };
}

/**
 * The client-final file tools' check of a client's result: its `path` (normalised like the request's) must be
 * the prepared request's path; what is wrong with it, or null.
 */
export function checkResultPath(preparedJson: string, result: unknown): string | null {
  const prepared: unknown = JSON.parse(preparedJson);
  const asked = typeof prepared === "object" && prepared !== null && "path" in prepared ? prepared.path : undefined;
  const answered = typeof result === "object" && result !== null && "path" in result ? result.path : undefined;
  if (typeof asked !== "string" || typeof answered !== "string") return "does not name the path it is for";
  const normalised = checkWorkspacePath(answered, { protectedPaths: [] });
  if (normalised.ok && normalised.path === asked) return null;
  return `is for ${quoted(answered)}, not for ${quoted(asked)}, the path that was asked for`;
}

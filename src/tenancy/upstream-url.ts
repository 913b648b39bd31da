// Where an org's configuration may send its people's conversations and its keys: an https: upstream (a model route's
// base URL, an MCP server), or http: to loopback where the deployment allows it for development
// (MCP_ALLOW_HTTP_LOOPBACK, as `npm start` sets it). The runtime's global_fetch_strictly_public keeps fetches off
// private networks besides.
import { isLoopbackHost } from "../settings";

/** What is wrong with `url` as an upstream `what` names ("an MCP server"), or null. */
export function upstreamUrlProblem(
  url: string,
  allowHttpLoopback: boolean,
  what = "an organization's upstream",
): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL.";
  }
  if (parsed.protocol === "https:") return null;
  if (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname)) {
    return allowHttpLoopback
      ? null
      : "http: is allowed only to loopback in development (MCP_ALLOW_HTTP_LOOPBACK); use https:.";
  }
  return `${what} must be https: (or http: to loopback in development).`;
}

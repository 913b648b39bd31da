// Where a webhook may be sent: https: to a public host; http: to loopback only in development
// (WEBHOOK_ALLOW_HTTP_LOOPBACK, as `npm start` sets it). A private, loopback or link-local address, or a name only a
// private network resolves, is refused at creation and again at each delivery (a URL stored under development
// settings is not sent to once the settings are production's).
import { isLoopbackHost } from "../settings";
import { credentialInUrlProblem, privateHostProblem, upstreamUrlProblem } from "../tenancy/upstream-url";

/** What is wrong with `url` as a webhook endpoint, or null. */
export function webhookUrlProblem(url: string, allowHttpLoopback: boolean): string | null {
  const problem =
    upstreamUrlProblem(url, allowHttpLoopback, "a webhook endpoint", "WEBHOOK_ALLOW_HTTP_LOOPBACK") ??
    credentialInUrlProblem(url, "receivers check the signature instead");
  if (problem) return problem;
  const parsed = new URL(url);
  if (allowHttpLoopback && isLoopbackHost(parsed.hostname)) return null;
  return privateHostProblem(parsed.hostname);
}

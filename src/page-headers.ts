// The headers every HTML page the app answers carries (the sign-in and consent pages of the authorize step, their
// problem pages): no other site may frame it (`frame-ancestors 'none'`, and X-Frame-Options for browsers without
// CSP), so a page of another site cannot overlay aptix's Allow button (clickjacking). A page's own policy is kept,
// with frame-ancestors added when it lacks one. The console, the admin page and /docs are static assets: their
// policy, frame-ancestors included, is in public/_headers.
import { createMiddleware } from "hono/factory";
import type { AppBindings } from "./http";

export const NO_FRAMING = "frame-ancestors 'none'";

/** `policy` with frame-ancestors 'none' added, unless it names frame-ancestors already. */
export function withoutFraming(policy: string | null): string {
  if (!policy?.trim()) return NO_FRAMING;
  if (/(^|;)\s*frame-ancestors\s/i.test(policy)) return policy;
  return `${policy.trim().replace(/;$/, "")}; ${NO_FRAMING}`;
}

export const pageHeaders = createMiddleware<AppBindings>(async (c, next) => {
  await next();
  if (!/^text\/html\b/i.test(c.res.headers.get("content-type") ?? "")) return;
  try {
    c.res.headers.set("content-security-policy", withoutFraming(c.res.headers.get("content-security-policy")));
    if (!c.res.headers.has("x-frame-options")) c.res.headers.set("x-frame-options", "DENY");
  } catch {
    // A response with immutable headers (fetched as it is) is no page of ours.
  }
});

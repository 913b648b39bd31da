// Who a request acts for: the credential behind it (an API key, a browser session after single sign-on, an OAuth
// grant of an MCP client, a Cloudflare Access assertion), the user it speaks for, its org and its scopes.
// Sessions belong to `org`; another org's caller gets 404.
/** `chat` (a member), `admin` (of its org), `operator` (of the deployment): src/tenancy/roles.ts. */
export const SCOPES = ["chat", "admin", "operator"] as const;
export type Scope = (typeof SCOPES)[number];

/** How the caller came in: `Authorization: Bearer <key>`, the console's cookie, an MCP client's OAuth token, Access. */
export const VIAS = ["api_key", "browser_session", "oauth", "cloudflare_access"] as const;
export type Via = (typeof VIAS)[number];

export interface Principal {
  /**
   * What the request's model calls count against (the per-key limit, a key's budget, usage rows' key): the API
   * key's id, for a browser session signed in with a key too; `user:<id>` for a person signed in by single sign-on
   * or Access (one bucket however many sessions they open); an MCP client's grant (`grant_…`).
   */
  keyId: string;
  /** The credential itself: the key's id, the browser session's (`bs_…`), the grant's, `access`. */
  credentialId: string;
  org: string;
  user: string;
  scopes: readonly string[];
  via: Via;
}

// Who a request acts for: the credential behind it (an API key, a browser session after single sign-on, an OAuth
// grant of an MCP client, a Cloudflare Access assertion), the user it speaks for, its org and its scopes.
// Sessions belong to `org`; another org's caller gets 404.
export const SCOPES = ["chat", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** How the caller came in: `Authorization: Bearer <key>`, the console's cookie, an MCP client's OAuth token, Access. */
export const VIAS = ["api_key", "browser_session", "oauth", "cloudflare_access"] as const;
export type Via = (typeof VIAS)[number];

export interface Principal {
  /** The credential's id: an API key's, a browser session's (`bs_…`), an OAuth grant's (`grant_…`). */
  keyId: string;
  org: string;
  user: string;
  scopes: readonly string[];
  via: Via;
}

// Who a request acts for: the key (or, later, the signed-in person) behind it, its org and its scopes. Sessions
// belong to `org`; another org's caller gets 404.
export const SCOPES = ["chat", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

export interface Principal {
  keyId: string;
  org: string;
  user: string;
  scopes: readonly string[];
}

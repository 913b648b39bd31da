// The test provider's users and clients, and a user as the account oidc-provider asks for (its claims).
import type { Account } from "oidc-provider";

export interface IdpUser {
  sub: string;
  email: string;
  name: string;
  groups: string[];
  org?: string;
}

/** A confidential client: code flow, its secret sent by client_secret_basic or client_secret_post. */
export interface IdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** alice is in the admins' group, bob is not; both belong to acme. One signs in by typing the sub (or email). */
export const IDP_USERS: IdpUser[] = [
  { sub: "alice", email: "alice@example.com", name: "Alice Admin", groups: ["aptix-admins", "staff"], org: "acme" },
  { sub: "bob", email: "bob@example.com", name: "Bob Builder", groups: ["staff"], org: "acme" },
];

/**
 * Which scope carries which claim. `org` is under `profile` and also under the custom `groups` scope, so a client
 * asking for `openid email profile groups` (or only one of the two) gets it.
 */
export const SCOPE_CLAIMS: Record<string, string[]> = {
  openid: ["sub"],
  email: ["email", "email_verified"],
  profile: ["name", "org"],
  groups: ["groups", "org"],
};

/** The user a login names: by sub or by email, case and surrounding spaces aside. */
export function findUser(users: IdpUser[], login: string): IdpUser | undefined {
  const wanted = login.trim().toLowerCase();
  return users.find((user) => user.sub.toLowerCase() === wanted || user.email.toLowerCase() === wanted);
}

/** The account of a user: every claim it has; the provider keeps those of the scopes granted. */
export function accountOf(user: IdpUser): Account {
  return {
    accountId: user.sub,
    claims: () => ({
      sub: user.sub,
      email: user.email,
      email_verified: true,
      name: user.name,
      groups: user.groups,
      ...(user.org === undefined ? {} : { org: user.org }),
    }),
  };
}

// The three roles, one word each, as keys (their scopes), signed-in people (their groups) and OAuth grants carry
// them: `operator` (the deployment's owner: deployment-wide modes, routes and MCP servers, every org's usage),
// `admin` (one org's owner: its own modes, routes, provider keys, keys, users, budgets, usage) and `member` (`chat`:
// their own sessions). A scope list says which a credential has; an operator is an admin of its own org too.
import type { Principal, Scope } from "../principal";

export const ROLES = ["operator", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

/** The scopes a role's credential carries: a member chats, an admin also administers its org, an operator also the deployment. */
export const ROLE_SCOPES: Record<Role, Scope[]> = {
  member: ["chat"],
  admin: ["chat", "admin"],
  operator: ["chat", "admin", "operator"],
};

/** A credential's scopes say whether it holds `scope`: `operator` includes `admin` (an operator administers its own org). */
export function holdsScope(scopes: readonly string[], scope: Scope): boolean {
  return scopes.includes(scope) || (scope === "admin" && scopes.includes("operator"));
}

/** The highest role the scopes give (a key with no scope of a role, e.g. `admin` alone, is an admin that cannot chat). */
export function roleOf(scopes: readonly string[]): Role {
  if (scopes.includes("operator")) return "operator";
  if (scopes.includes("admin")) return "admin";
  return "member";
}

export const isOperator = (principal: Pick<Principal, "scopes">): boolean => principal.scopes.includes("operator");
export const isOrgAdmin = (principal: Pick<Principal, "scopes">): boolean => holdsScope(principal.scopes, "admin");

/** Whether a credential with `granter`'s scopes may give `scopes` to another (never more than it holds). */
export function mayGrant(granter: readonly string[], scopes: readonly string[]): boolean {
  return scopes.every((scope) => scope !== "operator" || granter.includes("operator"));
}

/**
 * The org whose usage a caller reads: its own, or (an operator) the one it names. Anyone else naming another org
 * is refused by the caller's route (null here).
 */
export function usageOrg(principal: Pick<Principal, "org" | "scopes">, asked: string | undefined): string | null {
  if (asked === undefined || asked === principal.org) return principal.org;
  return isOperator(principal) ? asked : null;
}

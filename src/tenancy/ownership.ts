// Who owns what, and the one answer to "may this caller change or act on it?": configuration (modes, model routes,
// MCP servers) is the deployment's (owner null: every org sees it, only an operator changes it) or one org's (its
// people see it, its admins change it); what an org sees is its view, read where the rows are (the catalog's VIEW,
// routesSeenBy, serversSeenBy). A session is its owner's: an admin of its org may act on it too; anyone else is
// told it does not exist.
import { z } from "zod";
import { ApiError } from "../errors";
import type { Principal } from "../principal";
import { quoted } from "../quote";
import { isOperator, isOrgAdmin } from "./roles";

/** The org that owns a piece of configuration, or null for the deployment's. */
export type Owner = string | null;

/** Where a write asks to go (`?owner=`): the caller's org's own entry, or the deployment's. */
export const OWNER_CHOICES = ["org", "deployment"] as const;
export type OwnerChoice = (typeof OWNER_CHOICES)[number];

/** Which owner's entry a write or removal means, when not the one the caller sees under the name. */
export const OwnerQuery = z.object({
  owner: z
    .enum(OWNER_CHOICES, { error: "must be 'org' (your organization's own) or 'deployment'" })
    .optional()
    .describe("`org`: your organization's own; `deployment`: the deployment's (operators). Default: the one you see."),
});

/** The caller may change configuration of `owner`: the deployment's as an operator, its own org's as its admin. */
export function mayChange(principal: Pick<Principal, "org" | "scopes">, owner: Owner): boolean {
  return owner === null ? isOperator(principal) : owner === principal.org && isOrgAdmin(principal);
}

/**
 * The owner a write of `name` goes to: the one asked for; else the owner of the entry the caller sees under that
 * name (its org's own first); else an operator's deployment, an admin's own org. Refused (403) when the caller may
 * not change that owner's configuration, naming what it may do instead.
 */
export function writeOwner(
  principal: Pick<Principal, "org" | "scopes">,
  what: string,
  name: string,
  seen: { org: string | null } | null,
  asked: OwnerChoice | undefined,
): Owner {
  const owner =
    asked === "org"
      ? principal.org
      : asked === "deployment"
        ? null
        : seen
          ? seen.org
          : isOperator(principal)
            ? null
            : principal.org;
  if (mayChange(principal, owner)) return owner;
  throw new ApiError(
    "deployment_owned",
    owner === null && seen?.org === null && asked === undefined
      ? `The ${what} ${quoted(name)} is the deployment's: only an operator changes it. Your organization may have its own under this name instead (?owner=org), which its people then get.`
      : `Only an operator changes the deployment's ${what}s.`,
    { param: "owner" },
  );
}

/** A session's owner, and whether `caller` may read it or act on it: its owner, or an admin of its org. */
export function mayActOnSession(
  caller: { org: string; user: string; admin?: boolean | undefined },
  session: { org: string; user: string },
): boolean {
  return caller.org === session.org && (caller.user === session.user || caller.admin === true);
}

// Hono middleware: every route but /healthz (and the sign-in flow's) needs a caller: an MCP client's OAuth token on
// /mcp, `Authorization: Bearer <key>` (or `x-api-key: <key>`, as Anthropic's clients send it), Cloudflare Access's assertion (when CF_ACCESS_TEAM_DOMAIN is set), or the
// console's browser session cookie after single sign-on (with its CSRF token on anything that changes state).
// Some routes need a scope. The caller's user is recorded as seen, off the reply path.
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors";
import type { AppBindings } from "../http";
import type { Principal, Scope } from "../principal";
import { settings } from "../settings";
import { holdsScope } from "../tenancy/roles";
import { authenticateApiKey } from "./api-keys";
import { CSRF_HEADER, csrfTokenOf, lookupBrowserSession, SESSION_COOKIE } from "./browser-sessions";
import { ACCESS_HEADER, principalOfAccess } from "./cloudflare-access";
import { checkedByOAuth } from "./mcp-guard";
import { checkGrant, GrantProps, principalOfGrant } from "./oauth-grants";
import { isUserDisabled, noteSeen } from "./users";

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** What the key stands for (a bearer token's, or x-api-key's); refuses an unknown, expired or disabled user's key. */
async function principalOfKey(c: Context<AppBindings>, key: string | undefined): Promise<Principal> {
  let found = key ? await authenticateApiKey(c.get("db"), key) : null;
  // A key the nearest replica does not know yet (just created) is looked up where it was written.
  if (key && found && !found.ok && found.reason === "unknown") {
    found = await authenticateApiKey(c.env.DB.withSession("first-primary"), key);
  }
  if (found && !found.ok && found.reason === "expired") {
    throw new ApiError("api_key_expired", "This API key has expired; ask an admin of your organization for a new one.");
  }
  if (found && !found.ok && found.reason === "user_disabled") {
    throw new ApiError("user_disabled", "The user this API key acts for is disabled in your organization.");
  }
  if (!found?.ok) throw new ApiError("invalid_api_key", "Invalid API key.");
  return found.principal;
}

/** The browser session the cookie names; a request that changes state must carry its CSRF token. */
async function principalOfCookie(c: Context<AppBindings>, secret: string): Promise<Principal> {
  const { browserSessions } = settings(c.env).auth;
  // Read where sessions are written (an isolate keeps what it read for AUTH_CACHE_TTL_MS): a replica a moment
  // behind would take a session just ended, or miss one just begun.
  const found = await lookupBrowserSession(primary(c), secret, browserSessions.idleMs);
  if (!found.ok) {
    if (found.reason === "user_disabled") {
      throw new ApiError("user_disabled", "Your user is disabled in your organization; ask one of its admins.");
    }
    throw new ApiError("sign_in_expired", "Your sign-in has ended; sign in again.");
  }
  if (!SAFE_METHODS.has(c.req.method)) {
    const sent = c.req.header(CSRF_HEADER);
    if (!sent || sent !== (await csrfTokenOf(secret))) {
      throw new ApiError(
        "csrf_token_mismatch",
        `A request signed in by cookie that changes anything must carry the session's ${CSRF_HEADER} header (GET /auth/me gives it).`,
      );
    }
  }
  if (found.touch) c.executionCtx.waitUntil(found.touch());
  return found.principal;
}

/**
 * The grant an OAuth client's token stands for: the resource server (src/auth/oauth.ts) checked the token for the
 * resource the request is on (/mcp, /a2a) and handed its props on; aptix's own record says whether the grant still
 * stands.
 */
async function principalOfToken(c: Context<AppBindings>): Promise<Principal | null> {
  if (!checkedByOAuth(c.executionCtx, c.req.path)) return null;
  const props = GrantProps.safeParse(Reflect.get(c.executionCtx, "props"));
  if (!props.success) return null;
  // Read where grants are written: a replica a moment behind would take a grant just revoked.
  const check = await checkGrant(primary(c), props.data.grantId);
  if (!check.ok && check.reason === "user_disabled") {
    throw new ApiError("user_disabled", "The user this client acts for is disabled in your organization.");
  }
  if (!check.ok) throw new ApiError("invalid_access_token", "This client's access was revoked; authorize it again.");
  return principalOfGrant(props.data);
}

/** The database where credentials are written (revocations, sign-outs, new sessions), not a replica. */
const primary = (c: Context<AppBindings>) => c.env.DB.withSession("first-primary");

/** The caller of a request, by OAuth token (on the resource it is for: /mcp, /a2a), key or cookie; throws the refusal when there is none. */
export async function authenticate(c: Context<AppBindings>): Promise<Principal> {
  const granted = await principalOfToken(c);
  if (granted) return granted;
  const header = c.req.header("authorization");
  if (header) return principalOfKey(c, BEARER.exec(header)?.[1]);
  // Anthropic's clients send the key as x-api-key (read only when there is no Authorization header).
  const apiKey = c.req.header("x-api-key");
  if (apiKey) return principalOfKey(c, apiKey.trim());
  const { access } = settings(c.env).auth;
  const assertion = access ? c.req.header(ACCESS_HEADER) : undefined;
  if (access && assertion) {
    // Access lets a browser through by its cookie: a request that changes anything must come from a page of this
    // origin (the browser says so in Sec-Fetch-Site; clients that are not browsers send none).
    const site = c.req.header("sec-fetch-site");
    if (!SAFE_METHODS.has(c.req.method) && site !== undefined && site !== "same-origin" && site !== "none") {
      throw new ApiError(
        "csrf_token_mismatch",
        `A request signed in by Cloudflare Access that changes anything must come from a page of this origin (Sec-Fetch-Site: ${site}).`,
      );
    }
    const person = await principalOfAccess(access, assertion);
    if (await isUserDisabled(primary(c), person.org, person.user)) {
      throw new ApiError("user_disabled", "Your user is disabled in your organization; ask one of its admins.");
    }
    return person;
  }
  const secret = getCookie(c, SESSION_COOKIE, "host");
  if (secret) return principalOfCookie(c, secret);
  throw new ApiError(
    "missing_api_key",
    "Missing API key. Send it as 'Authorization: Bearer <key>', or sign in (GET /auth/login).",
  );
}

export const requireApiKey = createMiddleware<AppBindings>(async (c, next) => {
  const principal = await authenticate(c);
  c.set("principal", principal);
  c.set(
    "logger",
    c.get("logger").with({
      org: principal.org,
      keyId: principal.keyId,
      credential: principal.credentialId,
      user: principal.user,
    }),
  );
  const seen = noteSeen(c.env.DB, principal);
  if (seen) c.executionCtx.waitUntil(seen());
  await next();
});

export function requireScope(scope: Scope) {
  return createMiddleware<AppBindings>(async (c, next) => {
    if (!holdsScope(c.get("principal").scopes, scope)) {
      const who = c.get("principal").via === "api_key" ? "This API key lacks" : "You lack";
      throw new ApiError("insufficient_scope", `${who} the '${scope}' scope.`);
    }
    await next();
  });
}

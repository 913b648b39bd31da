// Signing in: GET /auth/login sends the browser to the organisation's identity provider, GET /auth/callback
// brings it back signed in (a browser session cookie), POST /auth/session signs a browser in with an API key,
// POST /auth/logout ends the session, GET /auth/me says who the caller is and how they came, GET /auth/session
// whether this browser is signed in, GET /auth/providers what a sign-in page may offer. All but /auth/me and
// /auth/logout need no caller.
import { createRoute } from "@hono/zod-openapi";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { authenticateApiKey, keyExpiry } from "../auth/api-keys";
import {
  CSRF_HEADER,
  createBrowserSession,
  csrfTokenOf,
  endBrowserSession,
  lookupBrowserSession,
  SESSION_COOKIE,
  sessionExpiry,
} from "../auth/browser-sessions";
import { ACCESS_HEADER, principalOfAccess } from "../auth/cloudflare-access";
import { beginSignIn, finishSignIn, SIGN_IN_COOKIE, SIGN_IN_FLOW_MS, safeReturnTo } from "../auth/oidc";
import { requireOwnPage } from "../auth/origin-guard";
import { findUser, upsertUser } from "../auth/users";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, routes } from "../http";
import { VIAS } from "../principal";
import { settings } from "../settings";
import { ROLE_SCOPES, ROLES, roleOf } from "../tenancy/roles";

const tags = ["auth"];

function oidcOf(c: AppContext) {
  const { oidc } = settings(c.env).auth;
  if (!oidc) {
    throw new ApiError(
      "sign_in_not_configured",
      "Single sign-on is not configured on this server (OIDC_ISSUER); sign in with an API key.",
    );
  }
  return oidc;
}

const redirectUriOf = (c: AppContext) => `${new URL(c.req.url).origin}/auth/callback`;

const Providers = z.object({
  singleSignOn: z.object({ loginUrl: z.string(), issuer: z.string() }).nullable(),
  apiKey: z.boolean(),
});

const Me = z
  .object({
    user: z.object({ id: z.string(), email: z.string().nullable(), name: z.string().nullable() }),
    org: z.string(),
    scopes: z.array(z.string()),
    /** The role the scopes give: `operator`, `admin` or `member` (docs/auth.md#roles). */
    role: z.enum(ROLES),
    via: z.enum(VIAS),
    /** The browser session's end and the token its requests that change anything carry (X-CSRF-Token). */
    session: z.object({ id: z.string(), expiresAt: z.string().nullable(), csrfToken: z.string() }).nullable(),
  })
  .meta({ id: "Me" });

const BrowserSessionView = z.object({
  signedIn: z.boolean(),
  via: z.enum(VIAS).nullable(),
  user: z.string().nullable(),
  org: z.string().nullable(),
  scopes: z.array(z.string()),
  expiresAt: z.string().nullable(),
  csrfToken: z.string().nullable(),
});

/** The sign-in routes that need no caller. */
export const signInRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/auth/session",
      summary: "Whether this browser is signed in (its session cookie), without a refusal when it is not",
      tags,
      security: [],
      responses: { 200: json(BrowserSessionView, "The browser's session, or signedIn false.") },
    }),
    async (c) => {
      c.header("cache-control", "no-store");
      const { auth } = settings(c.env);
      const secret = getCookie(c, SESSION_COOKIE, "host");
      const found = secret ? await lookupBrowserSession(primaryOf(c), secret, auth.browserSessions.idleMs) : null;
      if (secret && found?.ok) {
        const { principal } = found;
        return c.json(
          {
            signedIn: true,
            via: principal.via,
            user: principal.user,
            org: principal.org,
            scopes: [...principal.scopes],
            expiresAt: found.expiresAt,
            csrfToken: await csrfTokenOf(secret),
          },
          200,
        );
      }
      // Behind Cloudflare Access the browser is signed in by Access: its pages need no token of ours.
      const assertion = auth.access ? c.req.header(ACCESS_HEADER) : undefined;
      const person =
        auth.access && assertion ? await principalOfAccess(auth.access, assertion).catch(() => null) : null;
      if (person) {
        const { org, user, scopes } = person;
        return c.json(
          { signedIn: true, via: person.via, user, org, scopes: [...scopes], expiresAt: null, csrfToken: null },
          200,
        );
      }
      return c.json(
        { signedIn: false, via: null, user: null, org: null, scopes: [], expiresAt: null, csrfToken: null },
        200,
      );
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/auth/providers",
      summary: "How one may sign in here: single sign-on (when configured) and API keys",
      tags,
      security: [],
      responses: { 200: json(Providers, "The ways in.") },
    }),
    (c) => {
      const { oidc } = settings(c.env).auth;
      return c.json(
        { singleSignOn: oidc ? { loginUrl: "/auth/login", issuer: oidc.issuer } : null, apiKey: true },
        200,
      );
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/auth/login",
      summary: "Sends the browser to the identity provider (authorization code flow, PKCE S256, state, nonce)",
      tags,
      security: [],
      request: { query: z.object({ return_to: z.string().max(2000).optional() }) },
      responses: { 302: { description: "To the identity provider." }, ...errors(404, 500) },
    }),
    async (c) => {
      const oidc = oidcOf(c);
      const returnTo = safeReturnTo(c.req.valid("query").return_to);
      const { authorizationUrl, state } = await beginSignIn(c.get("db"), oidc, redirectUriOf(c), returnTo);
      setCookie(c, SIGN_IN_COOKIE, state, {
        prefix: "host",
        path: "/",
        httpOnly: true,
        secure: true,
        sameSite: "Lax",
        maxAge: SIGN_IN_FLOW_MS / 1000,
      });
      c.header("cache-control", "no-store");
      return c.redirect(authorizationUrl, 302);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/auth/callback",
      summary: "Where the identity provider sends the browser back: signs it in with a session cookie",
      tags,
      security: [],
      request: {
        query: z.object({
          code: z.string().optional(),
          state: z.string().optional(),
          iss: z.string().optional(),
          error: z.string().optional(),
          error_description: z.string().optional(),
        }),
      },
      responses: { 302: { description: "Signed in: to where the sign-in began." }, ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const oidc = oidcOf(c);
      const browserState = getCookie(c, SIGN_IN_COOKIE, "host");
      deleteCookie(c, SIGN_IN_COOKIE, { prefix: "host", path: "/", secure: true });
      const { person, returnTo } = await finishSignIn(
        c.get("db"),
        oidc,
        new URL(c.req.url),
        redirectUriOf(c),
        browserState,
      );
      await endEarlierSession(c);
      const { disabled } = await upsertUser(c.get("db"), { ...person, via: "browser_session" });
      if (disabled)
        throw new ApiError("user_disabled", "Your user is disabled in your organization; ask one of its admins.");
      const { browserSessions } = settings(c.env).auth;
      const session = await createBrowserSession(
        c.get("db"),
        {
          org: person.org,
          user: person.id,
          scopes: ROLE_SCOPES[person.role],
          via: "browser_session",
        },
        browserSessions,
      );
      setSessionCookie(c, session);
      c.get("logger")
        .with({ org: person.org, user: person.id, keyId: session.id })
        .addCustomEvent("Message", "[auth_sign_in]", "Signed in by single sign-on.");
      c.header("cache-control", "no-store");
      return c.redirect(returnTo, 302);
    },
  );

/** Where sessions are written: read there, not a replica a moment behind. */
const primaryOf = (c: AppContext) => c.env.DB.withSession("first-primary");

/** Ends the session the browser's cookie holds, if any: signing out, or signing in anew. */
async function endEarlierSession(c: AppContext): Promise<void> {
  const secret = getCookie(c, SESSION_COOKIE, "host");
  if (secret) await endBrowserSession(c.get("db"), secret);
}

/** Sets the browser session cookie of `session`. */
function setSessionCookie(c: AppContext, session: { secret: string; expiresAt: string }): void {
  setCookie(c, SESSION_COOKIE, session.secret, {
    prefix: "host",
    path: "/",
    httpOnly: true,
    secure: true,
    sameSite: "Lax",
    expires: new Date(session.expiresAt),
  });
}

/** POST /auth/session: a browser signs in with an API key (where there is no identity provider: npm start). */
export const keySignInRoutes = routes().openapi(
  createRoute({
    method: "post",
    path: "/auth/session",
    summary: "Signs this browser in with an API key: a browser session for the key's user and scopes (a form post)",
    tags,
    security: [],
    request: {
      body: {
        content: {
          "application/x-www-form-urlencoded": {
            schema: z.object({ api_key: z.string().min(1).max(500), return_to: z.string().max(4000).optional() }),
          },
        },
        required: true,
        description: "The key, and the local path to go back to.",
      },
    },
    responses: { 302: { description: "Signed in: back to return_to." }, ...errors(400, 401, 403) },
  }),
  async (c) => {
    requireOwnPage(c.req.raw);
    const form = c.req.valid("form");
    const found = await authenticateApiKey(primaryOf(c), form.api_key);
    if (!found.ok) {
      if (found.reason === "user_disabled") {
        throw new ApiError("user_disabled", "The user this API key acts for is disabled in your organization.");
      }
      if (found.reason === "expired") {
        throw new ApiError(
          "api_key_expired",
          "This API key has expired; ask an admin of your organization for a new one.",
        );
      }
      throw new ApiError("invalid_api_key", "Invalid API key.");
    }
    const { principal } = found;
    await endEarlierSession(c);
    await upsertUser(c.get("db"), { org: principal.org, id: principal.user, email: null, name: null, via: "api_key" });
    // The session stands only while the key does, and counts against it.
    const keyExpiresAt = await keyExpiry(primaryOf(c), principal.keyId);
    const session = await createBrowserSession(
      c.get("db"),
      { org: principal.org, user: principal.user, scopes: principal.scopes, via: "api_key" },
      settings(c.env).auth.browserSessions,
      Date.now(),
      { id: principal.keyId, expiresAt: keyExpiresAt },
    );
    setSessionCookie(c, session);
    c.header("cache-control", "no-store");
    return c.redirect(safeReturnTo(form.return_to), 302);
  },
);

/** The sign-in routes that need a caller. */
export const sessionAuthRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/auth/me",
      summary:
        "Who the caller is: user, org, scopes and role, how they signed in (and the browser session's CSRF token)",
      tags,
      security: BEARER,
      responses: { 200: json(Me, "The caller."), ...errors(401, 403) },
    }),
    async (c) => {
      const principal = c.get("principal");
      const user = await findUser(c.get("db"), principal.org, principal.user);
      const secret = getCookie(c, SESSION_COOKIE, "host");
      let session: z.infer<typeof Me>["session"] = null;
      if (principal.via === "browser_session" && secret) {
        session = {
          id: principal.credentialId,
          expiresAt: await sessionExpiry(primaryOf(c), principal.credentialId),
          csrfToken: await csrfTokenOf(secret),
        };
      }
      c.header("cache-control", "no-store");
      return c.json(
        {
          user: { id: principal.user, email: user?.email ?? null, name: user?.name ?? null },
          org: principal.org,
          scopes: [...principal.scopes],
          role: roleOf(principal.scopes),
          via: principal.via,
          session,
        },
        200,
      );
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/auth/logout",
      summary: `Ends the caller's browser session (with its ${CSRF_HEADER}) and clears its cookie`,
      tags,
      security: BEARER,
      responses: { 204: { description: "Signed out." }, ...errors(401, 403) },
    }),
    async (c) => {
      // The cookie's session ends whichever credential the request was made with.
      await endEarlierSession(c);
      deleteCookie(c, SESSION_COOKIE, { prefix: "host", path: "/", secure: true });
      return c.body(null, 204);
    },
  );

// The authorize step of OAuth for /mcp (src/auth/oauth.ts): GET /authorize checks the client's request (the
// authorization server's parser: client, redirect URI, resource; aptix: PKCE S256 for every client), signs the
// person in (single sign-on, or an API key) and shows the consent page: which client, what it may do, on whose
// behalf, Allow or Deny. POST /authorize takes the answer: the consent handle is bound to this browser by a cookie
// and works once, so no other page can answer for the person, and to the person it was shown to
// (src/auth/consent-binding.ts), so no one else's browser session can answer with it. Allow records the grant
// (listed at /context/grants) and sends the browser back to the client with its one-time code.
import {
  AuthorizationError,
  type AuthRequest,
  authorizationErrorRedirect,
  CimdFetchError,
  type ConsentDescription,
} from "@cloudflare/workers-oauth-provider";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { z } from "zod";
import { lookupBrowserSession, SESSION_COOKIE } from "../auth/browser-sessions";
import { bindConsent, consentShownTo } from "../auth/consent-binding";
import { AUTHORIZE_PATH, OAUTH_SCOPES, oauthHelpers, servesOAuth } from "../auth/oauth";
import { clientIdTooLong, isFormContentType, MAX_CLIENT_ID_BYTES } from "../auth/oauth-bounds";
import { newGrantId, oauthUserId, recordGrant } from "../auth/oauth-grants";
import { requireOwnPage } from "../auth/origin-guard";
import type { AppBindings } from "../http";
import { routes } from "../http";
import type { Principal } from "../principal";
import { settings } from "../settings";

type C = Context<AppBindings>;

const SCOPE_WORDS: Record<string, string> = {
  chat: "use the agent as you: start sessions, send messages, answer approvals, read your sessions",
};

function page(title: string, body: HtmlEscapedString | Promise<HtmlEscapedString>) {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <title>${title} · Aptix</title>
    <link rel="stylesheet" href="/styles.css" />
  </head>
  <body>
    <main class="sign-in"><section class="card">${body}</section></main>
  </body>
</html>`;
}

function problemPage(c: C, status: 400 | 401 | 403, title: string, detail: string) {
  c.header("cache-control", "no-store");
  return c.html(page(title, html`<h1>${title}</h1><p role="alert">${detail}</p>`), status);
}

/** An authorization request the server cannot take: back to the client when its redirect URI is known, else a page. */
function refusedRequest(c: C, error: unknown) {
  if (error instanceof AuthorizationError) {
    if (error.redirectTo) return c.redirect(error.redirectTo, 302);
    return problemPage(c, 400, "This authorization request is not valid", `${error.code}: ${error.description}`);
  }
  if (error instanceof CimdFetchError) {
    return problemPage(c, 400, "This client could not be verified", error.message);
  }
  throw error;
}

/** The person this browser is signed in as (a browser session), or null. */
async function signedIn(c: C): Promise<Principal | null | "disabled"> {
  const secret = getCookie(c, SESSION_COOKIE, "host");
  if (!secret) return null;
  const found = await lookupBrowserSession(
    c.env.DB.withSession("first-primary"),
    secret,
    settings(c.env).auth.browserSessions.idleMs,
  );
  if (found.ok) {
    if (found.touch) c.executionCtx.waitUntil(found.touch());
    return found.principal;
  }
  return found.reason === "user_disabled" ? "disabled" : null;
}

function signInPage(c: C) {
  const url = new URL(c.req.url);
  const returnTo = `${url.pathname}${url.search}`;
  const sso = settings(c.env).auth.oidc;
  c.header("cache-control", "no-store");
  return c.html(
    page(
      "Sign in to authorize",
      html`<h1>Sign in to continue</h1>
        <p>An application asks to use Aptix on your behalf. Sign in first; you will see what it asks before anything is allowed.</p>
        ${
          sso
            ? html`<p><a class="button-link" href="/auth/login?return_to=${encodeURIComponent(returnTo)}">Sign in with your company account</a></p>
                <p>Or, with an API key:</p>`
            : ""
        }
        <form method="post" action="/auth/session">
          <input type="hidden" name="return_to" value="${returnTo}" />
          <label for="api-key">API key</label>
          <input id="api-key" name="api_key" type="password" autocomplete="off" required />
          <button type="submit">Sign in</button>
        </form>`,
    ),
    200,
  );
}

function consentPage(who: Principal, description: ConsentDescription, handle: string) {
  const client = description.clientDomain
    ? html`<strong>${description.clientName}</strong> (verified domain <strong>${description.clientDomain}</strong>)`
    : html`<strong>${description.clientName}</strong> (a name the application gave itself)`;
  return page(
    "Authorize an application",
    html`<h1>Allow this application?</h1>
      <p>${client} asks to act on behalf of <strong>${who.user}</strong> in <strong>${who.org}</strong>.</p>
      <p>It may:</p>
      <ul>
        ${OAUTH_SCOPES.map((scope) => html`<li><code>${scope}</code>: ${SCOPE_WORDS[scope] ?? scope}</li>`)}
      </ul>
      <p>If you allow it, its access is sent to <strong>${description.redirectHost}</strong>.</p>
      ${
        description.redirectIsLoopback
          ? html`<p class="warning">That is a program on your own computer: allow it only if you started it.</p>`
          : ""
      }
      <p>You can revoke it at any time in the console's settings.</p>
      <form method="post" action="${AUTHORIZE_PATH}">
        <input type="hidden" name="handle" value="${handle}" />
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny" class="quiet">Deny</button>
      </form>`,
  );
}

/** The consent page's answer: its handle, and which button. */
const ConsentAnswer = z.object({ handle: z.string().min(1).max(200), decision: z.enum(["allow", "deny"]) });

/** The answer `request` carries (a form, as the consent page sends it), or null for anything else. */
async function consentAnswerOf(request: Request): Promise<z.infer<typeof ConsentAnswer> | null> {
  if (!isFormContentType(request.headers.get("content-type"))) return null;
  const fields = Object.fromEntries(new URLSearchParams(await request.clone().text()));
  const answer = ConsentAnswer.safeParse(fields);
  return answer.success ? answer.data : null;
}

/** Scopes this person may grant: what the server offers and they hold. */
function grantable(who: Principal): string[] {
  return OAUTH_SCOPES.filter((scope) => who.scopes.includes(scope));
}

/** The authorize step and the provider's own endpoints in /openapi.json (they are HTML and OAuth's wire). */
function describeOAuth(app: OpenAPIHono<AppBindings>): OpenAPIHono<AppBindings> {
  const open = { tags: ["oauth"], security: [] };
  const paths: [method: "get" | "post", path: string, summary: string, answer: string][] = [
    ["get", AUTHORIZE_PATH, "OAuth authorize step: sign-in, then the consent page (HTML)", "The page."],
    ["post", AUTHORIZE_PATH, "The consent page's answer (a form: handle, decision=allow|deny)", "To the client."],
    [
      "post",
      "/oauth/token",
      "OAuth token endpoint: code (PKCE S256) or refresh token for tokens; revocation",
      "Tokens.",
    ],
    ["post", "/oauth/revoke", "OAuth token revocation (RFC 7009): an access or refresh token", "Revoked."],
    ["post", "/oauth/register", "OAuth dynamic client registration (RFC 7591)", "The client."],
    ["get", "/.well-known/oauth-authorization-server", "Authorization server metadata (RFC 8414)", "Metadata."],
    ["get", "/.well-known/oauth-protected-resource/mcp", "Protected resource metadata of /mcp (RFC 9728)", "Metadata."],
    ["get", "/.well-known/oauth-protected-resource/a2a", "Protected resource metadata of /a2a (RFC 9728)", "Metadata."],
  ];
  for (const [method, path, summary, answer] of paths) {
    app.openAPIRegistry.registerPath({ method, path, summary, ...open, responses: { 200: { description: answer } } });
  }
  return app;
}

export const authorizeRoutes = describeOAuth(routes())
  .get(AUTHORIZE_PATH, async (c) => {
    const url = new URL(c.req.url);
    if (!servesOAuth(url)) {
      return problemPage(c, 400, "OAuth is not offered here", "This server authorizes clients over https: only.");
    }
    if (url.searchParams.getAll("client_id").some(clientIdTooLong)) {
      return problemPage(
        c,
        400,
        "This authorization request is not valid",
        `invalid_request: client_id is longer than ${MAX_CLIENT_ID_BYTES} bytes, and no client of this server has such an id.`,
      );
    }
    const oauth = oauthHelpers(url.origin, c.env);
    let request: AuthRequest;
    try {
      request = await oauth.parseAuthRequest(c.req.raw);
    } catch (error) {
      return refusedRequest(c, error);
    }
    if (request.codeChallengeMethod !== "S256" || !request.codeChallenge) {
      const refusal = authorizationErrorRedirect(request, "invalid_request", "PKCE with S256 is required.");
      return c.redirect(refusal, 302);
    }
    const who = await signedIn(c);
    if (who === "disabled") {
      return problemPage(c, 403, "Your user is disabled", "Ask an admin of your organization.");
    }
    if (!who) return signInPage(c);
    if (grantable(who).length === 0) {
      return c.redirect(
        authorizationErrorRedirect(
          request,
          "access_denied",
          "The signed-in user may not use the agent (no chat scope).",
        ),
        302,
      );
    }
    let description: ConsentDescription;
    try {
      description = await oauth.describeConsent(request);
    } catch (error) {
      return refusedRequest(c, error);
    }
    const consent = await oauth.beginConsent(request);
    await bindConsent(c.env.OAUTH_KV, consent.handle, who);
    const response = await c.html(consentPage(who, description, consent.handle), 200);
    const headers = new Headers(response.headers);
    for (const [name, value] of consent.headers) headers.append(name, value);
    headers.set("cache-control", "no-store");
    return new Response(response.body, { status: 200, headers });
  })
  .post(AUTHORIZE_PATH, async (c) => {
    const url = new URL(c.req.url);
    if (!servesOAuth(url)) {
      return problemPage(c, 400, "OAuth is not offered here", "This server authorizes clients over https: only.");
    }
    requireOwnPage(c.req.raw);
    const answer = await consentAnswerOf(c.req.raw);
    if (!answer) {
      return problemPage(
        c,
        400,
        "This answer is not valid",
        "The consent page answers with a form: its handle, and allow or deny. Start the authorization again from the application.",
      );
    }
    const { handle, decision } = answer;
    const who = await signedIn(c);
    if (!who || who === "disabled") {
      return problemPage(
        c,
        401,
        "You are not signed in",
        "Sign in, then start the authorization again from the application.",
      );
    }
    if (!(await consentShownTo(c.env.OAUTH_KV, handle, who))) {
      c.get("logger")
        .with({ org: who.org, user: who.user })
        .addCustomEvent(
          "Warning",
          "[oauth_consent_refused]",
          "A consent answer came from someone the page was not shown to.",
        );
      return problemPage(
        c,
        403,
        "This consent page was not shown to you",
        "Only the person it was shown to can answer it, before it expires. Start the authorization again from the application.",
      );
    }
    const oauth = oauthHelpers(url.origin, c.env);
    try {
      if (decision !== "allow") {
        const denied = await oauth.denyConsent(c.req.raw, handle);
        return new Response(null, { status: 302, headers: denied.headers });
      }
      const scopes = grantable(who);
      const approved = await oauth.approveConsent(c.req.raw, handle, { scope: scopes });
      const client = await oauth.lookupClient(approved.request.clientId);
      const clientName = client?.clientName ?? approved.request.clientId;
      const grantId = newGrantId();
      const { redirectTo } = await oauth.completeAuthorization({
        request: approved.request,
        userId: oauthUserId(who.org, who.user),
        metadata: { grantId, clientName },
        scope: scopes,
        props: { grantId, org: who.org, user: who.user, scopes },
      });
      // The server's id of the grant is in the code it made (`<user>:<grant>:<secret>`); recorded before the browser
      // goes back, so no token of it can come before aptix's record.
      const kvGrantId = new URL(redirectTo).searchParams.get("code")?.split(":")[1] ?? "";
      await recordGrant(c.get("db"), {
        id: grantId,
        kvGrantId,
        org: who.org,
        user: who.user,
        clientId: approved.request.clientId,
        clientName,
        scopes,
        resource: approved.request.resource ?? `${url.origin}/mcp`,
      });
      c.get("logger")
        .with({ org: who.org, user: who.user, keyId: grantId })
        .addCustomEvent("Message", "[oauth_grant]", "An MCP client was authorized.", [
          ["client", approved.request.clientId],
        ]);
      const headers = new Headers(approved.headers);
      headers.set("location", redirectTo);
      headers.set("cache-control", "no-store");
      return new Response(null, { status: 302, headers });
    } catch (error) {
      return refusedRequest(c, error);
    }
  });

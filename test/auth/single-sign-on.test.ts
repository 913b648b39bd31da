// Single sign-on against a real OpenID provider (oidc-provider on loopback, test/idp/): the code flow with PKCE,
// state and nonce end in a browser session; every way a sign-in can be wrong is refused with its own clear error
// and signs nobody in.
import { env } from "cloudflare:workers";
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import {
  checkedTokens,
  ID_TOKEN_IAT_SKEW_SECONDS,
  type IdTokenClaims,
  identityProvider,
  personOf,
  safeReturnTo,
} from "../../src/auth/oidc";
import type { ApiError } from "../../src/errors";
import { parseSettings } from "../../src/settings";
import {
  beginSignIn,
  callback,
  cookieFrom,
  oidcSettings,
  oidcVars,
  providerTokens,
  signedByProvider,
  signedInAs,
  signInAtProvider,
  ssoWorker,
} from "../fixtures/idp";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { apiErrorOf } from "../fixtures/refusal";
import { workerWith } from "../passthrough/harness";

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}
interface Me {
  user: { id: string; email: string | null; name: string | null };
  org: string;
  scopes: string[];
  via: string;
}

async function errorOf(response: Response): Promise<ErrorBody["error"]> {
  return ((await response.json()) as ErrorBody).error;
}

async function me(worker: ReturnType<typeof ssoWorker>, cookie: string): Promise<Me> {
  return (await (await worker.fetch("https://aptix.test/auth/me", { headers: { cookie } })).json()) as Me;
}

const config = oidcSettings;

/** What checkedTokens refuses `response` with. */
async function refusalOf(response: Response, nonce: string, skewSeconds = 0): Promise<ApiError> {
  const provider = await identityProvider(config());
  return apiErrorOf(checkedTokens(provider, config(), response, nonce, skewSeconds));
}

/** A token endpoint's answer carrying `idToken`, and an access token as every code flow's answer does. */
function tokenResponse(idToken: string): Response {
  return Response.json({ access_token: "an-access-token", token_type: "Bearer", expires_in: 3600, id_token: idToken });
}

/** An ID token the provider signs for alice with two audiences, us and another client, and `azp` when given. */
function forTwoAudiences(nonce: string, azp?: string): Promise<string> {
  return signedByProvider({ sub: "alice", aud: ["aptix-test", "other-app"], nonce, ...(azp ? { azp } : {}) });
}

describe("single sign-on", () => {
  it("offers the provider on the sign-in page", async () => {
    const response = await ssoWorker().fetch("https://aptix.test/auth/providers");
    expect(await response.json()).toEqual({
      singleSignOn: { loginUrl: "/auth/login", issuer: env.TEST_IDP_ISSUER },
      apiKey: true,
    });
  });

  it("sends the browser to the provider with the code flow, PKCE S256, state and nonce", async () => {
    const { authorizeUrl } = await beginSignIn(ssoWorker());
    const url = new URL(authorizeUrl);
    expect(url.origin).toBe(env.TEST_IDP_ISSUER);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: "aptix-test",
      redirect_uri: "https://aptix.test/auth/callback",
      response_type: "code",
      code_challenge_method: "S256",
      scope: "openid email profile groups",
    });
    expect(url.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get("state")).toBeTruthy();
    expect(url.searchParams.get("nonce")).toBeTruthy();
  });

  it("signs a person in with an HttpOnly, Secure, SameSite cookie and no token in the URL", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker);
    const back = await callback(worker, await signInAtProvider(begun.authorizeUrl, "alice"), begun.stateCookie);
    expect(back.status).toBe(302);
    expect(back.headers.get("location")).toBe("/");
    const setCookie = back.headers.getSetCookie().find((c) => c.startsWith("__Host-aptix_session=")) ?? "";
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; Secure/);
    expect(setCookie).toMatch(/; SameSite=Lax/);
    expect(setCookie).toMatch(/; Path=\//);
  });

  it("names the person by their email, their org by its claim, and makes the admin group's members admins", async () => {
    const worker = ssoWorker();
    expect(await me(worker, await signedInAs(worker, "alice"))).toMatchObject({
      user: { id: "alice@example.com", email: "alice@example.com", name: "Alice Admin" },
      org: "acme",
      scopes: ["chat", "admin"],
      role: "admin",
      via: "browser_session",
    });
    expect((await me(worker, await signedInAs(worker, "bob"))).scopes).toEqual(["chat"]);
  });

  it("lists the signed-in person among the org's users, with their name", async () => {
    const worker = ssoWorker();
    const cookie = await signedInAs(worker, "alice");
    const response = await worker.fetch("https://aptix.test/admin/users", { headers: { cookie } });
    const { users } = (await response.json()) as { users: { id: string; name: string; lastSeenVia: string }[] };
    expect(users.find((u) => u.id === "alice@example.com")).toMatchObject({
      name: "Alice Admin",
      lastSeenVia: "browser_session",
    });
  });

  it("goes back to the page the sign-in began at", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker, "?return_to=%2Fadmin.html");
    const back = await callback(worker, await signInAtProvider(begun.authorizeUrl, "bob"), begun.stateCookie);
    expect(back.headers.get("location")).toBe("/admin.html");
  });

  it("never goes back to another site", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker, "?return_to=%2F%2Fevil.example%2F");
    const back = await callback(worker, await signInAtProvider(begun.authorizeUrl, "bob"), begun.stateCookie);
    expect(back.headers.get("location")).toBe("/");
  });

  it("reads every return path a browser would take to another site as /", () => {
    const elsewhere = ["//evil.example", "/\\evil.example", "/\t/evil.example", "https://evil.example", "evil", ""];
    expect(elsewhere.map(safeReturnTo)).toEqual(elsewhere.map(() => "/"));
    expect(safeReturnTo("/admin.html?tab=keys")).toBe("/admin.html?tab=keys");
  });

  it("refuses a wrong state, signing nobody in", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker);
    const url = new URL(await signInAtProvider(begun.authorizeUrl, "bob"));
    url.searchParams.set("state", "not-the-state");
    const back = await callback(worker, url.href, begun.stateCookie);
    expect(back.status).toBe(400);
    expect(await errorOf(back)).toMatchObject({ code: "invalid_sign_in_state", param: "state" });
    expect(cookieFrom(back, "__Host-aptix_session")).toBeNull();
  });

  it("refuses a callback in a browser that did not begin the sign-in (login CSRF)", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker);
    const back = await callback(worker, await signInAtProvider(begun.authorizeUrl, "bob"), null);
    expect((await errorOf(back)).code).toBe("invalid_sign_in_state");
  });

  it("refuses the same callback twice", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker);
    const url = await signInAtProvider(begun.authorizeUrl, "bob");
    expect((await callback(worker, url, begun.stateCookie)).status).toBe(302);
    const again = await callback(worker, url, begun.stateCookie);
    expect(await errorOf(again)).toMatchObject({
      code: "invalid_sign_in_state",
      message: "This sign-in is unknown or already used; start again at /auth/login.",
    });
  });

  it("refuses a replayed code: one already exchanged, brought back under a new sign-in", async () => {
    const worker = ssoWorker();
    const first = await beginSignIn(worker);
    const used = new URL(await signInAtProvider(first.authorizeUrl, "bob"));
    expect((await callback(worker, used.href, first.stateCookie)).status).toBe(302);
    const second = await beginSignIn(worker);
    const replay = new URL(await signInAtProvider(second.authorizeUrl, "bob"));
    replay.searchParams.set("code", used.searchParams.get("code") ?? "");
    const back = await callback(worker, replay.href, second.stateCookie);
    expect(back.status).toBe(401);
    expect(await errorOf(back)).toMatchObject({ code: "sign_in_failed", type: "authentication_error" });
    expect((await errorOf(await callback(worker, replay.href, second.stateCookie))).code).toBe("invalid_sign_in_state");
  });

  it("refuses an expired code", async () => {
    const worker = ssoWorker(env.TEST_IDP_SHORT_CODE_ISSUER);
    const begun = await beginSignIn(worker);
    const url = await signInAtProvider(begun.authorizeUrl, "bob", env.TEST_IDP_SHORT_CODE_ISSUER);
    // The provider's codes last a second.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const back = await callback(worker, url, begun.stateCookie);
    const error = await errorOf(back);
    expect(error.code).toBe("sign_in_failed");
    expect(error.message).toContain("invalid_grant");
    // It waits 2.1 s of real time (the provider's codes last a second): its own limit, not the default 5 s.
  }, 15_000);

  it("refuses a PKCE verifier that does not match the challenge", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker);
    const url = await signInAtProvider(begun.authorizeUrl, "bob");
    await env.DB.prepare("UPDATE sign_in_flows SET code_verifier = ?").bind("x".repeat(64)).run();
    const back = await callback(worker, url, begun.stateCookie);
    const error = await errorOf(back);
    expect(error.code).toBe("sign_in_failed");
    expect(error.message).toContain("invalid_grant");
  });

  it("refuses a sign-in the person declined at the provider", async () => {
    const worker = ssoWorker();
    const begun = await beginSignIn(worker);
    const state = new URL(begun.authorizeUrl).searchParams.get("state") ?? "";
    const url = `https://aptix.test/auth/callback?error=access_denied&error_description=declined&state=${state}&iss=${encodeURIComponent(env.TEST_IDP_ISSUER)}`;
    const error = await errorOf(await callback(worker, url, begun.stateCookie));
    expect(error).toMatchObject({
      code: "sign_in_failed",
      message: "The identity provider did not sign you in (access_denied: declined).",
    });
  });

  it("refuses a disabled user, signing them in nowhere", async () => {
    const worker = ssoWorker();
    const adminCookie = await signedInAs(worker, "alice");
    await signedInAs(worker, "bob");
    const me = (await (
      await worker.fetch("https://aptix.test/auth/me", { headers: { cookie: adminCookie } })
    ).json()) as {
      session: { csrfToken: string };
    };
    const disable = await worker.fetch("https://aptix.test/admin/users/bob%40example.com", {
      method: "PATCH",
      headers: { cookie: adminCookie, "content-type": "application/json", "x-csrf-token": me.session.csrfToken },
      body: JSON.stringify({ disabled: true }),
    });
    expect(disable.status).toBe(200);
    const begun = await beginSignIn(worker);
    const back = await callback(worker, await signInAtProvider(begun.authorizeUrl, "bob"), begun.stateCookie);
    expect((await errorOf(back)).code).toBe("user_disabled");
    expect(cookieFrom(back, "__Host-aptix_session")).toBeNull();
  });
});

describe("the ID token", () => {
  it("of another issuer is refused", async () => {
    const refusal = await refusalOf(await providerTokens({ issuer: env.TEST_IDP_OTHER_ISSUER, nonce: "n1" }), "n1");
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/"iss"/);
  });

  it("for another audience is refused", async () => {
    const response = await providerTokens({
      client: { id: "other-app", secret: "other-app-secret", redirectUri: "http://localhost/other/callback" },
      nonce: "n2",
    });
    const refusal = await refusalOf(response, "n2");
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/"aud"/);
  });

  it("past its expiry is refused", async () => {
    const refusal = await refusalOf(await providerTokens({ nonce: "n3" }), "n3", 2 * 3600);
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/"exp"/);
  });

  it("with another nonce is refused", async () => {
    const refusal = await refusalOf(await providerTokens({ nonce: "n4" }), "not-n4");
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/"nonce"/);
  });

  it("whose claims were changed after signing fails its signature check against the issuer's keys", async () => {
    const body = (await (await providerTokens({ nonce: "n5" })).json()) as { id_token: string };
    const [header, payload, signature] = body.id_token.split(".");
    const claims = JSON.parse(atob((payload ?? "").replace(/-/g, "+").replace(/_/g, "/")));
    const forged = btoa(JSON.stringify({ ...claims, groups: ["aptix-admins"], email: "mallory@example.com" }))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    const response = new Response(JSON.stringify({ ...body, id_token: `${header}.${forged}.${signature}` }), {
      headers: { "content-type": "application/json" },
    });
    const refusal = await refusalOf(response, "n5");
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/signature/);
  });

  it("issued more than a minute ahead of this server's clock is refused", async () => {
    const behind = -(ID_TOKEN_IAT_SKEW_SECONDS + 60);
    const refusal = await refusalOf(await providerTokens({ nonce: "n7" }), "n7", behind);
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/"iat"/);
  });

  it("issued less than a minute ahead of this server's clock is accepted (clocks differ a little)", async () => {
    const provider = await identityProvider(config());
    const { idClaims } = await checkedTokens(provider, config(), await providerTokens({ nonce: "n8" }), "n8", -30);
    expect(idClaims.sub).toBe("alice");
  });

  it("refused by the token endpoint in words that quote the client's secret, shows the refusal without it", async () => {
    const { clientId, clientSecret, issuer } = config();
    // The credential as the sign-in sends it, by the library's own client authentication (its encoding of id and
    // secret percent-encodes "-", unlike encodeURIComponent).
    const sent = new Headers();
    await oauth.ClientSecretBasic(clientSecret)({ issuer }, { client_id: clientId }, new URLSearchParams(), sent);
    const basic = (sent.get("authorization") ?? "").replace(/^Basic /, "");
    expect(basic).not.toBe(btoa(`${clientId}:${clientSecret}`));
    const quoting = Response.json(
      { error: "invalid_client", error_description: `secret ${clientSecret} (Basic ${basic}) does not match` },
      { status: 400 },
    );
    const refusal = await refusalOf(quoting, "n12");
    expect(refusal.code).toBe("sign_in_failed");
    expect(refusal.message).toBe(
      "The identity provider refused the authorization code (invalid_client: secret [redacted] (Basic [redacted]) does not match).",
    );
  });

  it("for several audiences without an azp is refused", async () => {
    const refusal = await refusalOf(tokenResponse(await forTwoAudiences("n9")), "n9");
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/"aud"/);
  });

  it("for several audiences authorizing another client (azp) is refused", async () => {
    const refusal = await refusalOf(tokenResponse(await forTwoAudiences("n10", "other-app")), "n10");
    expect(refusal.code).toBe("invalid_id_token");
    expect(refusal.message).toMatch(/"azp"/);
  });

  it("for several audiences authorizing us (azp) is accepted", async () => {
    const provider = await identityProvider(config());
    const idToken = await forTwoAudiences("n11", "aptix-test");
    const { idClaims } = await checkedTokens(provider, config(), tokenResponse(idToken), "n11");
    expect(idClaims).toMatchObject({ sub: "alice", azp: "aptix-test", aud: ["aptix-test", "other-app"] });
  });

  it("from the provider, fresh and for us, is accepted", async () => {
    const provider = await identityProvider(config());
    const { idClaims } = await checkedTokens(provider, config(), await providerTokens({ nonce: "n6" }), "n6");
    expect(idClaims).toMatchObject({ sub: "alice", aud: "aptix-test", iss: env.TEST_IDP_ISSUER });
  });
});

describe("the person an ID token names", () => {
  it("is refused when the provider says the email that names them is not verified", () => {
    const claims: IdTokenClaims = { iss: "x", sub: "s", email: "ceo@example.com", email_verified: false, org: "acme" };
    expect(() => personOf(config(), claims)).toThrow(/not verified/);
  });

  it("has the role their groups give: an operator group's member is an operator, an admin group's an admin", () => {
    const settings = { ...config(), operatorGroups: ["aptix-operators"], adminGroups: ["aptix-admins"] };
    const person = (groups: string[]) =>
      personOf(settings, { iss: "x", sub: "s", email: "p@example.com", org: "acme", groups }).role;
    expect([person(["aptix-operators"]), person(["aptix-admins"]), person(["staff"]), person([])]).toEqual([
      "operator",
      "admin",
      "member",
      "member",
    ]);
  });
});

describe("a misconfigured provider", () => {
  it("fails loudly at sign-in, naming OIDC_ISSUER", async () => {
    const worker = workerWith({ ...oidcVars(env.TEST_UPSTREAM_URL) });
    const response = await worker.fetch("https://aptix.test/auth/login", { redirect: "manual" });
    expect(response.status).toBe(500);
    const error = await errorOf(response);
    expect(error.code).toBe("misconfigured");
    expect(error.message).toContain("OIDC_ISSUER");
  });

  it("without its client secret answers every request misconfigured, naming OIDC_CLIENT_SECRET", async () => {
    const worker = workerWith({ ...oidcVars(), OIDC_CLIENT_SECRET: "" } as Partial<Cloudflare.Env>);
    const response = await worker.fetch("https://aptix.test/modes", { headers: authHeaders(TEST_KEYS.chat.key) });
    const error = await errorOf(response);
    expect(error.code).toBe("misconfigured");
    expect(error.message).toContain("OIDC_CLIENT_SECRET");
  });

  it("on http: off loopback is refused, naming OIDC_ISSUER", () => {
    expect(() => parseSettings({ ...oidcVars("http://login.example.com") })).toThrow(
      "OIDC_ISSUER must be an https: URL (http: only on loopback: localhost, 127.0.0.1, [::1]).",
    );
  });
});

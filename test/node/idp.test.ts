// The test OpenID provider (test/idp/oidc-idp.ts) as a relying party sees it: discovery, a browser-like sign-in,
// the code exchanged with oauth4webapi (the Worker's library), the ID token's claims and UserInfo's, and its
// test-control doors.
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDP_OTHER_CLIENT, IDP_TEST_CLIENT } from "../idp/global-setup.ts";
import { type RunningIdp, signInAt, startIdp } from "../idp/oidc-idp.ts";

const REDIRECT_URI = "https://aptix.test/auth/callback";
const SCOPE = "openid email profile groups";
const INSECURE = { [oauth.allowInsecureRequests]: true };

let idp: RunningIdp;
let otherIdp: RunningIdp;
let as: oauth.AuthorizationServer;
const client: oauth.Client = { client_id: IDP_TEST_CLIENT.client_id };

beforeAll(async () => {
  const clients = [IDP_TEST_CLIENT, IDP_OTHER_CLIENT];
  [idp, otherIdp] = await Promise.all([startIdp({ clients }), startIdp({ clients })]);
  const issuer = new URL(idp.issuer);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, INSECURE));
});

afterAll(async () => {
  await Promise.all([idp?.close(), otherIdp?.close()]);
});

interface Authorization {
  url: string;
  state: string;
  nonce: string;
  verifier: string;
}

async function authorization(): Promise<Authorization> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint ?? "");
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  }).toString();
  return { url: url.href, state, nonce, verifier };
}

/** Signs in as `user` and exchanges the code as the Worker does; the ID token's claims and the access token. */
async function signInAndExchange(
  user: string,
  clientAuth: oauth.ClientAuth,
): Promise<{ claims: oauth.IDToken | undefined; accessToken: string }> {
  const started = await authorization();
  const callback = new URL(await signInAt(started.url, user));
  const params = oauth.validateAuthResponse(as, client, callback, started.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    clientAuth,
    params,
    REDIRECT_URI,
    started.verifier,
    INSECURE,
  );
  const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: started.nonce });
  return { claims: oauth.getValidatedIdTokenClaims(result), accessToken: result.access_token };
}

function decodeJwtPart(token: string, index: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[index] ?? "", "base64url").toString("utf8"));
}

describe("the test OpenID provider", () => {
  it("publishes discovery for its own loopback issuer, with S256 PKCE and the code flow only", () => {
    expect(as.issuer).toBe(idp.issuer);
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(as.code_challenge_methods_supported).toContain("S256");
    expect(as.response_types_supported).toEqual(["code"]);
    expect(as.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post"]);
    expect(as.scopes_supported).toEqual(expect.arrayContaining(["openid", "email", "profile", "groups"]));
  });

  it("signs alice in with an ID token that names her by sub alone, as it does by default when it issues an access token", async () => {
    const { claims } = await signInAndExchange("alice", oauth.ClientSecretBasic(IDP_TEST_CLIENT.client_secret));
    expect(claims).toMatchObject({ iss: idp.issuer, aud: IDP_TEST_CLIENT.client_id, sub: "alice" });
    for (const claim of ["email", "email_verified", "name", "groups", "org"]) expect(claims).not.toHaveProperty(claim);
  });

  it("answers alice's email, name, groups and org at its UserInfo endpoint, for her access token", async () => {
    const { accessToken } = await signInAndExchange("alice", oauth.ClientSecretBasic(IDP_TEST_CLIENT.client_secret));
    const response = await oauth.userInfoRequest(as, client, accessToken, INSECURE);
    expect(await oauth.processUserInfoResponse(as, client, "alice", response)).toEqual({
      sub: "alice",
      email: "alice@example.com",
      email_verified: true,
      name: "Alice Admin",
      groups: ["aptix-admins", "staff"],
      org: "acme",
    });
  });

  it("accepts the client secret in the body (client_secret_post) too", async () => {
    const { claims } = await signInAndExchange("bob", oauth.ClientSecretPost(IDP_TEST_CLIENT.client_secret));
    expect(claims).toMatchObject({ sub: "bob", aud: IDP_TEST_CLIENT.client_id });
  });

  it("refuses an authorization request without PKCE, back at the redirect_uri", async () => {
    const url = new URL((await authorization()).url);
    url.searchParams.delete("code_challenge");
    url.searchParams.delete("code_challenge_method");
    const callback = new URL(await signInAt(url.href, "alice"));
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("error")).toBe("invalid_request");
  });

  it("refuses an unknown user on its login page", async () => {
    await expect(signInAt((await authorization()).url, "mallory")).rejects.toThrow(
      'There is no user "mallory" here: sign in as alice or bob.',
    );
  });

  it("signs with keys of its own: two providers publish different keys", async () => {
    const moduli = async (issuer: string) => {
      const jwks = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: Array<{ n: string }> };
      return jwks.keys.map((key) => key.n);
    };
    const [mine, theirs] = await Promise.all([moduli(idp.issuer), moduli(otherIdp.issuer)]);
    expect(mine).toHaveLength(1);
    expect(theirs).not.toContain(mine[0]);
  });

  it("runs a whole code flow for another client through POST /__test/tokens", async () => {
    const response = await fetch(`${idp.issuer}/__test/tokens`, {
      method: "POST",
      body: JSON.stringify({
        client_id: IDP_OTHER_CLIENT.client_id,
        client_secret: IDP_OTHER_CLIENT.client_secret,
        redirect_uri: IDP_OTHER_CLIENT.redirect_uris[0],
        user: "alice",
        nonce: "nonce-123",
      }),
    });
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as { id_token: string; token_type: string };
    expect(tokens.token_type).toBe("Bearer");
    expect(decodeJwtPart(tokens.id_token, 0)).toMatchObject({ alg: "RS256" });
    expect(decodeJwtPart(tokens.id_token, 1)).toMatchObject({
      iss: idp.issuer,
      aud: IDP_OTHER_CLIENT.client_id,
      sub: "alice",
      nonce: "nonce-123",
    });
  });

  it("signs the claims POST /__test/jwt is given with the key it publishes, as its issuer", async () => {
    const response = await fetch(`${idp.issuer}/__test/jwt`, {
      method: "POST",
      body: JSON.stringify({ claims: { sub: "alice", aud: ["aptix-test", "other-app"] } }),
    });
    expect(response.status).toBe(200);
    const { jwt } = (await response.json()) as { jwt: string };
    const keys = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(jwt, keys, { issuer: idp.issuer });
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({ sub: "alice", aud: ["aptix-test", "other-app"] });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);
  });

  it("signs in through POST /__test/sign-in and answers the callback URL", async () => {
    const started = await authorization();
    const response = await fetch(`${idp.issuer}/__test/sign-in`, {
      method: "POST",
      body: JSON.stringify({ authorize_url: started.url, user: "bob" }),
    });
    expect(response.status).toBe(200);
    const { callback_url } = (await response.json()) as { callback_url: string };
    const callback = new URL(callback_url);
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("state")).toBe(started.state);
    expect(callback.searchParams.get("code")).toEqual(expect.any(String));
  });
});

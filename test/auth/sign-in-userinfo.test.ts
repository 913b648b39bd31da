// Sign-in reads the claims an ID token leaves out (a provider in its default configuration puts only `sub` there
// when it issues an access token) from the provider's UserInfo endpoint, about the ID token's subject only.
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import { type CheckedTokens, checkedTokens, type IdTokenClaims, identityProvider } from "../../src/auth/oidc";
import { withUserInfo } from "../../src/auth/oidc-userinfo";
import { oidcSettings, providerTokens, signedInAs, ssoWorker } from "../fixtures/idp";
import { apiErrorOf } from "../fixtures/refusal";

/** The test provider is on loopback, over http:. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** A whole code flow at the test provider for `user`, its answer checked as a sign-in checks it. */
async function tokensOf(user: string): Promise<CheckedTokens> {
  const nonce = `nonce-${user}-${crypto.randomUUID()}`;
  const provider = await identityProvider(oidcSettings());
  return checkedTokens(provider, oidcSettings(), await providerTokens({ user, nonce }), nonce);
}

async function filled(idClaims: IdTokenClaims, accessToken: string, as?: oauth.AuthorizationServer) {
  const provider = await identityProvider(oidcSettings());
  return withUserInfo(as ?? provider.as, oidcSettings(), accessToken, idClaims, INSECURE);
}

interface Me {
  user: { id: string; email: string | null; name: string | null };
  org: string;
}

describe("UserInfo at sign-in", () => {
  it("signs a person in through a provider that puts their email only in UserInfo, naming them by it", async () => {
    expect((await tokensOf("alice")).idClaims).not.toHaveProperty("email");
    const worker = ssoWorker();
    const cookie = await signedInAs(worker, "alice");
    const me = (await (await worker.fetch("https://aptix.test/auth/me", { headers: { cookie } })).json()) as Me;
    expect(me).toMatchObject({
      user: { id: "alice@example.com", email: "alice@example.com", name: "Alice Admin" },
      org: "acme",
    });
  });

  it("fills the claims the ID token leaves out, read with the access token", async () => {
    const alice = await tokensOf("alice");
    expect(await filled(alice.idClaims, alice.accessToken)).toMatchObject({
      sub: "alice",
      email: "alice@example.com",
      email_verified: true,
      name: "Alice Admin",
      groups: ["aptix-admins", "staff"],
      org: "acme",
    });
  });

  it("keeps the ID token's claim where both carry one", async () => {
    const alice = await tokensOf("alice");
    const idClaims = { ...alice.idClaims, name: "Alice, as her ID token says" };
    expect(await filled(idClaims, alice.accessToken)).toMatchObject({
      name: "Alice, as her ID token says",
      email: "alice@example.com",
    });
  });

  it("refuses a UserInfo answer about another person than the ID token's", async () => {
    const [alice, bob] = await Promise.all([tokensOf("alice"), tokensOf("bob")]);
    const refusal = await apiErrorOf(filled(bob.idClaims, alice.accessToken));
    expect(refusal.code).toBe("sign_in_failed");
    expect(refusal.message).toBe(
      "The identity provider's UserInfo names another person (sub 'alice') than its ID token (sub 'bob'); nobody is signed in.",
    );
  });

  it("refuses when UserInfo does not take the access token", async () => {
    const alice = await tokensOf("alice");
    const refusal = await apiErrorOf(filled(alice.idClaims, "not-an-access-token"));
    expect(refusal.code).toBe("sign_in_failed");
    expect(refusal.message).toContain("invalid_token");
  });

  it("is not asked when the ID token carries every claim aptix reads", async () => {
    const alice = await tokensOf("alice");
    const complete = {
      ...alice.idClaims,
      email: "alice@example.com",
      email_verified: true,
      name: "Alice Admin",
      groups: ["staff"],
      org: "acme",
    };
    // An access token UserInfo would refuse: asked, it would fail the sign-in.
    expect(await filled(complete, "not-an-access-token")).toEqual(complete);
  });

  it("is not asked of a provider that names no UserInfo endpoint", async () => {
    const alice = await tokensOf("alice");
    const { as } = await identityProvider(oidcSettings());
    const withoutUserInfo = { ...as, userinfo_endpoint: undefined };
    const idClaims = alice.idClaims;
    expect(await filled(idClaims, alice.accessToken, withoutUserInfo)).toEqual(idClaims);
  });
});

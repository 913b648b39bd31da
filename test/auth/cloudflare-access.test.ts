// Cloudflare Access in front of the Worker: its signed Cf-Access-Jwt-Assertion is the person. The assertions here
// are RS256 tokens of Access's shape (iss the team, aud a list holding the application's AUD tag, the person's email
// and Access's id for them in sub), signed with the key of a stand-in that publishes its keys where Access publishes
// a team's (test/idp/global-setup.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { principalOfAccess } from "../../src/auth/cloudflare-access";
import { forgetIsolateState } from "../../src/isolate-cache";
import { signedByProvider } from "../fixtures/idp";
import { apiErrorOf } from "../fixtures/refusal";
import { workerWith } from "../passthrough/harness";

const AUD = "access-app-aud-0123456789abcdef";
const access = () => ({ teamDomain: env.TEST_ACCESS_TEAM, aud: AUD, org: "acme" });
const accessWorker = () =>
  workerWith({
    CF_ACCESS_TEAM_DOMAIN: env.TEST_ACCESS_TEAM,
    CF_ACCESS_AUD: AUD,
    CF_ACCESS_ORG: "acme",
  } as Partial<Cloudflare.Env>);

interface ErrorBody {
  error: { code: string; message: string };
}

/** An assertion the team signs for the application `aud`, for alice, as Access signs one (its claims). */
function assertion(aud = AUD): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    aud: [aud],
    email: "alice@example.com",
    sub: "7335d417-61da-459d-899c-0a01c76a2f94",
    type: "app",
    identity_nonce: "6ei69kawdKzMIAPF",
    country: "US",
    nbf: now,
  };
  return signedByProvider(claims, env.TEST_ACCESS_TEAM);
}

describe("Cloudflare Access", () => {
  it("takes the team's assertion as the person, by their email, in CF_ACCESS_ORG", async () => {
    const response = await accessWorker().fetch("https://aptix.test/auth/me", {
      headers: { "cf-access-jwt-assertion": await assertion() },
    });
    expect(await response.json()).toMatchObject({
      user: { id: "alice@example.com" },
      org: "acme",
      scopes: ["chat"],
      via: "cloudflare_access",
    });
  });

  it("refuses an assertion for another application (AUD)", async () => {
    const other = await assertion("other-app");
    const response = await accessWorker().fetch("https://aptix.test/auth/me", {
      headers: { "cf-access-jwt-assertion": other },
    });
    expect(response.status).toBe(401);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.code).toBe("invalid_access_assertion");
    expect(error.message).toContain('"aud"');
  });

  it("refuses an assertion of another team", async () => {
    const error = await apiErrorOf(
      principalOfAccess({ ...access(), teamDomain: env.TEST_IDP_ISSUER }, await assertion()),
    );
    expect(error.code).toBe("invalid_access_assertion");
  });

  it("refuses an expired assertion", async () => {
    const error = await apiErrorOf(
      principalOfAccess(access(), await assertion(), new Date(Date.now() + 2 * 3_600_000)),
    );
    expect(error.code).toBe("invalid_access_assertion");
    expect(error.message).toContain('"exp"');
  });

  it("refuses an assertion whose claims were changed after signing", async () => {
    const [header, payload, signature] = (await assertion()).split(".");
    const claims = JSON.parse(atob((payload ?? "").replace(/-/g, "+").replace(/_/g, "/")));
    const forged = btoa(JSON.stringify({ ...claims, email: "mallory@example.com" }))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    const error = await apiErrorOf(principalOfAccess(access(), `${header}.${forged}.${signature}`));
    expect(error.message).toMatch(/signature/);
  });

  it("refuses a state-changing request of another site made with the assertion", async () => {
    const response = await accessWorker().fetch("https://aptix.test/context/sessions", {
      method: "POST",
      headers: {
        "cf-access-jwt-assertion": await assertion(),
        "content-type": "application/json",
        "sec-fetch-site": "same-site",
      },
      body: "{}",
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as ErrorBody).error.code).toBe("csrf_token_mismatch");
  });

  it("takes a state-changing request of its own pages", async () => {
    const response = await accessWorker().fetch("https://aptix.test/context/sessions", {
      method: "POST",
      headers: {
        "cf-access-jwt-assertion": await assertion(),
        "content-type": "application/json",
        "sec-fetch-site": "same-origin",
      },
      body: "{}",
    });
    expect(response.status).toBe(201);
  });

  it("ignores the header where Access is not configured (anyone could send it)", async () => {
    const response = await workerWith().fetch("https://aptix.test/auth/me", {
      headers: { "cf-access-jwt-assertion": await assertion() },
    });
    expect(((await response.json()) as ErrorBody).error.code).toBe("missing_api_key");
  });
});

describe("Cloudflare Access and disabled users", () => {
  it("refuses the assertion of a user an admin disabled", async () => {
    await env.DB.prepare(
      "INSERT INTO users (org, id, disabled_at) VALUES ('acme', 'alice@example.com', '2026-01-01T00:00:00Z') ON CONFLICT (org, id) DO UPDATE SET disabled_at = excluded.disabled_at",
    ).run();
    // As after the disabling in another isolate, once its bound passed (this one read the user enabled before).
    forgetIsolateState();
    try {
      const response = await accessWorker().fetch("https://aptix.test/auth/me", {
        headers: { "cf-access-jwt-assertion": await assertion() },
      });
      expect(response.status).toBe(403);
      expect(((await response.json()) as ErrorBody).error.code).toBe("user_disabled");
    } finally {
      await env.DB.prepare("UPDATE users SET disabled_at = NULL WHERE org = 'acme'").run();
      forgetIsolateState();
    }
  });

  it("tells the console a browser behind Access is signed in, with no token of aptix's to carry", async () => {
    const response = await accessWorker().fetch("https://aptix.test/auth/session", {
      headers: { "cf-access-jwt-assertion": await assertion() },
    });
    expect(await response.json()).toMatchObject({
      signedIn: true,
      via: "cloudflare_access",
      user: "alice@example.com",
      csrfToken: null,
    });
  });
});

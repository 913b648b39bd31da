// /mcp as an OAuth 2.1 protected resource: discovery, registration, sign-in and consent, tokens bound to /mcp,
// refresh, grants listed and revoked; every way a client's request can be wrong is refused and grants nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { oauthUserId } from "../../src/auth/oauth-grants";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import {
  allowedCode,
  answerConsent,
  authorizedClient,
  authorizeQuery,
  browserSignedIn,
  consentPage,
  exchangeCode,
  listTools,
  ORIGIN,
  RESOURCE,
  registerClient,
  tokenRequest,
  worker,
} from "../fixtures/mcp-oauth";
import { pkce, REDIRECT_URI } from "../oauth/client-flow.ts";
import { trackedExecutionContext } from "../setup/pending-work";

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

async function grantsOf(key: string) {
  const response = await worker("/context/grants", { headers: authHeaders(key) });
  return (
    (await response.json()) as { grants: { id: string; clientId: string; clientName: string; scopes: string[] }[] }
  ).grants;
}

describe("the authorization server's user ids", () => {
  it("never meet for two different people, and hold no ':'", () => {
    expect(oauthUserId("a~b", "c")).not.toBe(oauthUserId("a", "b~c"));
    expect(oauthUserId("a|b", "c")).not.toBe(oauthUserId("a", "b|c"));
    expect(oauthUserId("o:x", "u:y")).not.toContain(":");
  });
});

describe("grant props", () => {
  it("are trusted only when the OAuth front door checked the token they came with", async () => {
    const { clientId } = await authorizedClient(TEST_KEYS.chat.key, "Props Client");
    const grant = (await grantsOf(TEST_KEYS.chat.key)).find((g) => g.clientId === clientId);
    const ctx = trackedExecutionContext();
    Reflect.set(ctx, "props", { grantId: grant?.id, org: "org-a", user: "bob", scopes: ["chat"] });
    const request = new Request(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    const response = await createApp().fetch(request, env, ctx);
    expect(response.status).toBe(401);
  });
});

describe("discovery", () => {
  it("answers /mcp without a token 401, naming the resource metadata in WWW-Authenticate", async () => {
    const response = await worker("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain(
      `resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(((await response.json()) as ErrorBody).error.code).toBe("missing_api_key");
  });

  it("publishes protected resource metadata naming this server as the authorization server", async () => {
    const response = await worker("/.well-known/oauth-protected-resource/mcp");
    expect(await response.json()).toMatchObject({ resource: RESOURCE, authorization_servers: [ORIGIN] });
  });

  it("publishes authorization server metadata: code flow, PKCE S256 only, registration, revocation", async () => {
    const metadata = (await (await worker("/.well-known/oauth-authorization-server")).json()) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
    });
  });
});

describe("the authorize step", () => {
  it("asks a browser that is not signed in to sign in first", async () => {
    const clientId = await registerClient();
    const { challenge } = await pkce();
    const response = await worker(authorizeQuery({ clientId, challenge }));
    const text = await response.text();
    expect(text).toContain("Sign in to continue");
    expect(text).toContain('name="api_key"');
  });

  it("shows the consent page: which client, on whose behalf, what it may do, where it goes", async () => {
    const clientId = await registerClient("Editor Plugin");
    const { challenge } = await pkce();
    const page = await consentPage({ clientId, challenge }, await browserSignedIn(TEST_KEYS.chat.key));
    expect(page.response.status).toBe(200);
    expect(page.text).toContain("Editor Plugin");
    expect(page.text).toContain("<strong>bob</strong> in <strong>org-a</strong>");
    expect(page.text).toContain("<code>chat</code>");
    expect(page.text).toContain("127.0.0.1");
    expect(page.handle).toBeTruthy();
    expect(page.response.headers.get("x-frame-options")).toBe("DENY");
  });

  it("escapes what the client says of itself", async () => {
    const clientId = await registerClient('<script>alert("x")</script>');
    const { challenge } = await pkce();
    const page = await consentPage({ clientId, challenge }, await browserSignedIn(TEST_KEYS.chat.key));
    expect(page.text).not.toContain('<script>alert("x")</script>');
    expect(page.text).toContain("&lt;script&gt;");
  });

  it("refuses an unknown client on a page of its own, sending nothing anywhere", async () => {
    const { challenge } = await pkce();
    const page = await consentPage(
      { clientId: "no-such-client", challenge },
      await browserSignedIn(TEST_KEYS.chat.key),
    );
    expect(page.response.status).toBe(400);
    expect(page.response.headers.get("location")).toBeNull();
    expect(page.handle).toBeNull();
  });

  it("refuses a redirect URI that does not match the client's exactly", async () => {
    const clientId = await registerClient();
    const { challenge } = await pkce();
    const page = await consentPage(
      { clientId, challenge, redirectUri: "http://127.0.0.1:5555/callback/other" },
      await browserSignedIn(TEST_KEYS.chat.key),
    );
    expect(page.response.status).toBe(400);
    expect(page.response.headers.get("location")).toBeNull();
    expect(page.handle).toBeNull();
  });

  it("refuses a registration with an http: redirect off loopback", async () => {
    const response = await worker("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "x",
        redirect_uris: ["http://evil.example/cb"],
        token_endpoint_auth_method: "none",
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_client_metadata");
  });

  it("refuses a request without PKCE, back at the client", async () => {
    const clientId = await registerClient();
    const page = await consentPage({ clientId, challenge: null }, await browserSignedIn(TEST_KEYS.chat.key));
    const location = new URL(page.response.headers.get("location") ?? "");
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get("error")).toBe("invalid_request");
  });

  it("sends the client access_denied when the person denies, granting nothing", async () => {
    const clientId = await registerClient("Denied Client");
    const { challenge } = await pkce();
    const cookie = await browserSignedIn(TEST_KEYS.chat.key);
    const page = await consentPage({ clientId, challenge }, cookie);
    const answered = await answerConsent(page.handle ?? "", [cookie, ...page.cookies], "deny");
    const location = new URL(answered.headers.get("location") ?? "");
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("state")).toBe("st-1");
    expect((await grantsOf(TEST_KEYS.chat.key)).map((g) => g.clientId)).not.toContain(clientId);
  });

  it("refuses an answer from a browser the consent page was not shown to", async () => {
    const clientId = await registerClient();
    const { challenge } = await pkce();
    const cookie = await browserSignedIn(TEST_KEYS.chat.key);
    const page = await consentPage({ clientId, challenge }, cookie);
    const answered = await answerConsent(page.handle ?? "", [cookie], "allow");
    expect(answered.status).toBe(400);
    expect(answered.headers.get("location")).toBeNull();
  });
});

describe("a client known by its Client ID Metadata Document", () => {
  const CLIENT_ID = "https://client.example/oauth/aptix-client.json";
  const DOCUMENT = {
    client_id: CLIENT_ID,
    client_name: "Metadata Document Client",
    redirect_uris: [REDIRECT_URI],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };

  /** The client's own site serves its document (the server fetches it from there; nothing else is served). */
  function serveDocument() {
    const realFetch = globalThis.fetch;
    return vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url === CLIENT_ID) {
        return Promise.resolve(Response.json(DOCUMENT, { headers: { "cache-control": "max-age=300" } }));
      }
      return realFetch(input, init);
    });
  }

  it("is shown on the consent page with its verified domain, and gets tokens without registering", async () => {
    const served = serveDocument();
    try {
      const { verifier, challenge } = await pkce();
      const cookie = await browserSignedIn(TEST_KEYS.chat.key);
      const page = await consentPage({ clientId: CLIENT_ID, challenge }, cookie);
      expect(page.text).toContain("Metadata Document Client");
      expect(page.text).toContain("verified domain <strong>client.example</strong>");
      const answered = await answerConsent(page.handle ?? "", [cookie, ...page.cookies], "allow");
      const code = new URL(answered.headers.get("location") ?? "").searchParams.get("code") ?? "";
      const response = await exchangeCode({ clientId: CLIENT_ID, code, verifier });
      const tokens = (await response.json()) as { access_token: string };
      expect((await listTools(tokens.access_token)).status).toBe(200);
    } finally {
      served.mockRestore();
    }
  });
});

describe("tokens", () => {
  it("let the client call /mcp as the person who allowed it", async () => {
    const { tokens } = await authorizedClient(TEST_KEYS.chat.key);
    expect(tokens.scope).toBe("chat");
    const response = await listTools(tokens.access_token);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: { tools: { name: string }[] } };
    expect(body.result.tools.map((t) => t.name)).toContain("send_message");
  });

  it("are listed as the person's grants, with the client's name", async () => {
    const { clientId } = await authorizedClient(TEST_KEYS.chat.key, "Listed Client");
    const grants = await grantsOf(TEST_KEYS.chat.key);
    expect(grants.find((g) => g.clientId === clientId)).toMatchObject({
      clientName: "Listed Client",
      scopes: ["chat"],
    });
  });

  it("are refused for another resource at the token endpoint", async () => {
    const clientId = await registerClient();
    const { code, verifier } = await allowedCode(TEST_KEYS.chat.key, clientId);
    const response = await exchangeCode({ clientId, code, verifier, resource: "https://other.example/mcp" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_target");
  });

  it("are refused by another resource (a token is bound to this server's /mcp)", async () => {
    const { tokens } = await authorizedClient(TEST_KEYS.chat.key);
    const response = await listTools(tokens.access_token, "https://elsewhere.aptix.test");
    expect(response.status).toBe(401);
  });

  it("are not given for a PKCE verifier that does not match", async () => {
    const clientId = await registerClient();
    const { code } = await allowedCode(TEST_KEYS.chat.key, clientId);
    const response = await exchangeCode({ clientId, code, verifier: (await pkce()).verifier });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("are not given twice for one code (a replayed code)", async () => {
    const clientId = await registerClient();
    const { code, verifier } = await allowedCode(TEST_KEYS.chat.key, clientId);
    const exchange = () => exchangeCode({ clientId, code, verifier });
    expect((await exchange()).status).toBe(200);
    const replay = await exchange();
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("are renewed with the refresh token, which is rotated", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key);
    const response = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource: RESOURCE,
    });
    const renewed = (await response.json()) as { access_token: string; refresh_token: string };
    expect(renewed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await listTools(renewed.access_token)).status).toBe(200);
  });

  it("stop working at once when the person revokes the grant, and cannot be refreshed", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key, "Revoked Client");
    expect((await listTools(tokens.access_token)).status).toBe(200);
    const grant = (await grantsOf(TEST_KEYS.chat.key)).find((g) => g.clientId === clientId);
    const revoke = await worker(`/context/grants/${grant?.id}`, {
      method: "DELETE",
      headers: authHeaders(TEST_KEYS.chat.key),
    });
    expect(revoke.status).toBe(204);
    const refused = await listTools(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("invalid_access_token");
    const refresh = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource: RESOURCE,
    });
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("stop working when the client revokes its access token at the token endpoint (RFC 7009)", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key);
    expect((await listTools(tokens.access_token)).status).toBe(200);
    const revoke = await tokenRequest({ token: tokens.access_token, client_id: clientId });
    expect(revoke.status).toBe(200);
    const refused = await listTools(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("invalid_access_token");
  });

  it("stop working when their user is disabled", async () => {
    const key = `sk-oauth-${crypto.randomUUID()}`;
    const { hashApiKey } = await import("../../src/auth/api-keys");
    await env.DB.prepare(
      "INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES ('oauth-dana', ?, 'd', 'org-a', 'dana', '[\"chat\"]')",
    )
      .bind(await hashApiKey(key))
      .run();
    const { tokens } = await authorizedClient(key);
    const disable = await worker("/admin/users/dana", {
      method: "PATCH",
      headers: { ...authHeaders(TEST_KEYS.admin.key), "content-type": "application/json" },
      body: JSON.stringify({ disabled: true }),
    });
    expect(disable.status).toBe(200);
    const refused = await listTools(tokens.access_token);
    expect([401, 403]).toContain(refused.status);
  });

  it("are refused for a grant id nobody has (revoking it is grant_not_found)", async () => {
    const response = await worker("/context/grants/grant_none", { method: "DELETE", headers: authHeaders() });
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("grant_not_found");
  });

  it("are listed once per client: consenting again replaces the client's earlier grant", async () => {
    const clientId = await registerClient("Twice Client");
    const cookie = await browserSignedIn(TEST_KEYS.chat.key);
    for (let i = 0; i < 2; i++) {
      const { challenge } = await pkce();
      const page = await consentPage({ clientId, challenge }, cookie);
      await answerConsent(page.handle ?? "", [cookie, ...page.cookies], "allow");
    }
    const grants = (await grantsOf(TEST_KEYS.chat.key)).filter((g) => g.clientId === clientId);
    expect(grants).toHaveLength(1);
  });

  it("leave the list when the client revokes its refresh token at the token endpoint", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key, "Self-revoking Client");
    await tokenRequest({ token: tokens.refresh_token, client_id: clientId, token_type_hint: "refresh_token" });
    expect((await grantsOf(TEST_KEYS.chat.key)).map((g) => g.clientId)).not.toContain(clientId);
  });

  it("leave API keys working on /mcp as before", async () => {
    expect((await listTools(TEST_KEYS.chat.key)).status).toBe(200);
  });

  it("refuse the key of a disabled user on /mcp with user_disabled", async () => {
    const key = `sk-oauth-${crypto.randomUUID()}`;
    const { hashApiKey } = await import("../../src/auth/api-keys");
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES ('oauth-erin', ?, 'e', 'org-a', 'erin', '[\"chat\"]')",
      ).bind(await hashApiKey(key)),
      env.DB.prepare("INSERT INTO users (org, id, disabled_at) VALUES ('org-a', 'erin', '2026-01-01T00:00:00Z')"),
    ]);
    const response = await listTools(key);
    expect(response.status).toBe(403);
    expect(((await response.json()) as ErrorBody).error.code).toBe("user_disabled");
  });

  it("refuse an unknown bearer on /mcp with invalid_access_token and the challenge", async () => {
    const response = await listTools("not-a-key-nor-a-token");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("resource_metadata=");
    expect(((await response.json()) as ErrorBody).error.code).toBe("invalid_access_token");
  });
});

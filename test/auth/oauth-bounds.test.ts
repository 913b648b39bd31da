// What the authorization server reads is bounded before it reads it: an id longer than any it keeps (its records are
// KV keys of at most 512 bytes) is refused in OAuth's words at the token endpoint, as an unknown client on the
// authorize step's page and as an unknown token on /mcp; the consent answer is the page's form or nothing.
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { authorizeQuery, browserSignedIn, registerClient, tokenRequest, worker } from "../fixtures/mcp-oauth";
import { pkce } from "../oauth/client-flow.ts";

const LONG = "x".repeat(600);

async function oauthErrorOf(response: Response) {
  return { status: response.status, ...((await response.json()) as { error: string; error_description: string }) };
}

describe("the token endpoint", () => {
  it("refuses a client_id longer than 500 bytes with invalid_client", async () => {
    const refused = await oauthErrorOf(await tokenRequest({ grant_type: "authorization_code", client_id: LONG }));
    expect(refused).toMatchObject({ status: 401, error: "invalid_client" });
  });

  it("refuses a Basic client id longer than 500 bytes with invalid_client", async () => {
    const response = await worker("/oauth/token", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${LONG}:secret`)}`,
      },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "a:b:c" }),
    });
    expect(await oauthErrorOf(response)).toMatchObject({ status: 401, error: "invalid_client" });
  });

  it.each(["code", "refresh_token"])(
    "refuses a %s naming ids longer than any it issues with invalid_grant",
    async (name) => {
      const clientId = await registerClient();
      const grantType = name === "code" ? "authorization_code" : "refresh_token";
      const refused = await oauthErrorOf(
        await tokenRequest({ grant_type: grantType, client_id: clientId, [name]: `${LONG}:${LONG}:secret` }),
      );
      expect(refused).toMatchObject({ status: 400, error: "invalid_grant" });
      expect(refused.error_description).toContain(name);
    },
  );

  it("refuses to revoke a token naming ids longer than any it issues with invalid_request", async () => {
    const clientId = await registerClient();
    const refused = await oauthErrorOf(await tokenRequest({ client_id: clientId, token: `${LONG}:${LONG}:secret` }));
    expect(refused).toMatchObject({ status: 400, error: "invalid_request" });
  });

  it("refuses a body larger than 64 KiB with 413", async () => {
    const refused = await oauthErrorOf(
      await tokenRequest({ grant_type: "refresh_token", padding: "p".repeat(70_000) }),
    );
    expect(refused).toMatchObject({ status: 413, error: "invalid_request" });
  });
});

describe("the authorize step", () => {
  it("shows a client_id longer than 500 bytes a page of its own, sending the browser nowhere", async () => {
    const { challenge } = await pkce();
    const response = await worker(authorizeQuery({ clientId: LONG, challenge }), {
      headers: { cookie: await browserSignedIn(TEST_KEYS.chat.key) },
      redirect: "manual",
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it.each([
    ["JSON", "application/json", JSON.stringify({ handle: "h", decision: "allow" })],
    ["text", "text/plain", "handle=h&decision=allow"],
    ["broken multipart", "multipart/form-data; boundary=b", "--other\r\n\r\nx\r\n--other--\r\n"],
    ["an empty form", "application/x-www-form-urlencoded", ""],
  ])("answers a consent answer sent as %s with a 400 page", async (_, contentType, body) => {
    const response = await worker("/authorize", {
      method: "POST",
      headers: { "content-type": contentType, cookie: await browserSignedIn(TEST_KEYS.chat.key) },
      body,
      redirect: "manual",
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });
});

describe("/mcp", () => {
  it("refuses a token naming ids longer than any the server issues: invalid_access_token with the challenge", async () => {
    const response = await worker("/mcp", {
      method: "POST",
      headers: { authorization: `Bearer ${LONG}:${LONG}:secret`, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(response.headers.get("www-authenticate")).toContain("resource_metadata=");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_access_token");
  });
});

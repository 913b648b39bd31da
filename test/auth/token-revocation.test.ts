// Token revocation at its own endpoint, /oauth/revoke (RFC 7009), named in the authorization server metadata: an
// access token revoked there stops working on /mcp, a refresh token revoked there ends its grant, and the endpoint
// takes revocations only.
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { authorizedClient, listTools, ORIGIN, RESOURCE, tokenRequest, worker } from "../fixtures/mcp-oauth";

function revoke(body: Record<string, string>) {
  return worker("/oauth/revoke", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });
}

describe("/oauth/revoke", () => {
  it("is the revocation endpoint the metadata names, with the token endpoint's client authentication", async () => {
    const metadata = (await (await worker("/.well-known/oauth-authorization-server")).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.revocation_endpoint).toBe(`${ORIGIN}/oauth/revoke`);
    expect(metadata.revocation_endpoint_auth_methods_supported).toEqual(metadata.token_endpoint_auth_methods_supported);
  });

  it("revokes an access token: /mcp refuses it at once", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key, "Revoking Access Client");
    expect((await listTools(tokens.access_token)).status).toBe(200);
    const revoked = await revoke({ token: tokens.access_token, client_id: clientId, token_type_hint: "access_token" });
    expect(revoked.status).toBe(200);
    expect((await listTools(tokens.access_token)).status).toBe(401);
  });

  it("revokes a refresh token: it refreshes nothing after", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key, "Revoking Refresh Client");
    const revoked = await revoke({
      token: tokens.refresh_token,
      client_id: clientId,
      token_type_hint: "refresh_token",
    });
    expect(revoked.status).toBe(200);
    const refreshed = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource: RESOURCE,
    });
    expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("answers 200 for a token it never issued (RFC 7009 §2.2)", async () => {
    const { clientId } = await authorizedClient(TEST_KEYS.chat.key, "Unknown Token Client");
    expect((await revoke({ token: "not-a-token", client_id: clientId })).status).toBe(200);
  });

  it("takes revocations only: a grant_type is refused with invalid_request, and no tokens are given", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key, "Misdirected Client");
    const response = await revoke({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.error).toBe("invalid_request");
    expect(body.access_token).toBeUndefined();
  });

  it("refuses a request without a token with invalid_request", async () => {
    const { clientId } = await authorizedClient(TEST_KEYS.chat.key, "Tokenless Client");
    const response = await revoke({ client_id: clientId });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("refuses an unknown client with invalid_client", async () => {
    const response = await revoke({ token: "a:b:c", client_id: "no-such-client" });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_client");
  });
});

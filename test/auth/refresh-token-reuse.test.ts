// Refresh tokens are rotated at each use (OAuth 2.1 §4.3.1): one rotated away is refused with invalid_grant, and its
// coming back ends the grant: the newest refresh token and the grant's access tokens stop working, and aptix's record
// of the grant is revoked, so /mcp refuses at once.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { authorizedClient, listTools, RESOURCE, tokenRequest } from "../fixtures/mcp-oauth";
import type { Tokens } from "../oauth/client-flow.ts";

interface OAuthErrorBody {
  error: string;
  error_description: string;
}

function refresh(clientId: string, refreshToken: string) {
  return tokenRequest({
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: clientId,
    resource: RESOURCE,
  });
}

/** A client authorized by bob, and the tokens of its first refresh (the first refresh token is rotated away). */
async function refreshedOnce(name: string) {
  const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key, name);
  const response = await refresh(clientId, tokens.refresh_token);
  expect(response.status).toBe(200);
  return { clientId, first: tokens, renewed: (await response.json()) as Tokens };
}

async function grantRevokedAt(clientId: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT revoked_at FROM oauth_grants WHERE client_id = ?")
    .bind(clientId)
    .first<{ revoked_at: string | null }>();
  return row?.revoked_at ?? null;
}

describe("refresh token rotation", () => {
  it("gives new tokens for a refresh token used once, and they work on /mcp", async () => {
    const { renewed } = await refreshedOnce("Rotating Client");
    expect((await listTools(renewed.access_token)).status).toBe(200);
  });

  it("refuses a refresh token used a second time with invalid_grant", async () => {
    const { clientId, first } = await refreshedOnce("Replaying Client");
    const replay = await refresh(clientId, first.refresh_token);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as OAuthErrorBody).error).toBe("invalid_grant");
  });

  it("ends the grant when a rotated-away refresh token comes back: the newest refresh token is refused", async () => {
    const { clientId, first, renewed } = await refreshedOnce("Reused Refresh Client");
    await refresh(clientId, first.refresh_token);
    const newest = await refresh(clientId, renewed.refresh_token);
    expect(newest.status).toBe(400);
    expect(((await newest.json()) as OAuthErrorBody).error).toBe("invalid_grant");
  });

  it("ends the grant when a rotated-away refresh token comes back: its access tokens are refused on /mcp at once", async () => {
    const { clientId, first, renewed } = await refreshedOnce("Reused Access Client");
    expect((await listTools(renewed.access_token)).status).toBe(200);
    await refresh(clientId, first.refresh_token);
    const refused = await listTools(renewed.access_token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("invalid_access_token");
  });

  it("marks aptix's record of the grant revoked when a rotated-away refresh token comes back", async () => {
    const { clientId, first } = await refreshedOnce("Recorded Reuse Client");
    expect(await grantRevokedAt(clientId)).toBeNull();
    await refresh(clientId, first.refresh_token);
    expect(await grantRevokedAt(clientId)).not.toBeNull();
  });

  it("gives tokens to only one of two refreshes with the same token at once, and ends the grant", async () => {
    const { clientId, tokens } = await authorizedClient(TEST_KEYS.chat.key, "Racing Client");
    const answers = await Promise.all([
      refresh(clientId, tokens.refresh_token),
      refresh(clientId, tokens.refresh_token),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    const winner = answers.find((answer) => answer.status === 200);
    const renewed = (await winner?.json()) as Tokens;
    expect((await listTools(renewed.access_token)).status).toBe(401);
    expect(await grantRevokedAt(clientId)).not.toBeNull();
  });

  it("leaves the person's other grants working when one grant ends", async () => {
    const other = await authorizedClient(TEST_KEYS.chat.key, "Bystander Client");
    const { clientId, first } = await refreshedOnce("Ended Client");
    await refresh(clientId, first.refresh_token);
    expect((await listTools(other.tokens.access_token)).status).toBe(200);
    expect((await refresh(other.clientId, other.tokens.refresh_token)).status).toBe(200);
  });
});

// Dynamic client registration (RFC 7591) is bounded: a client name, the number and length of redirect URIs, the other
// URIs and the body as a whole; a refusal names the field. And the authorization server metadata advertises what a
// client can use: each grant type, response type and token endpoint authentication method it lists is one
// registration takes (private_key_jwt: for Client ID Metadata Documents, which need no registration), and PKCE is
// S256 only, as aptix requires of every client.
import { describe, expect, it } from "vitest";
import { ORIGIN, worker } from "../fixtures/mcp-oauth";
import { REDIRECT_URI } from "../oauth/client-flow.ts";

interface OAuthErrorBody {
  error: string;
  error_description: string;
}

function register(metadata: Record<string, unknown>) {
  return worker("/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Bounded", redirect_uris: [REDIRECT_URI], ...metadata }),
  });
}

async function refusal(response: Response): Promise<{ status: number } & OAuthErrorBody> {
  return { status: response.status, ...((await response.json()) as OAuthErrorBody) };
}

const uriOf = (length: number, index = 0) => {
  const base = `http://127.0.0.1:5555/cb${index}/`;
  return base + "x".repeat(length - base.length);
};

describe("registration bounds", () => {
  it("takes a client at every bound", async () => {
    const response = await register({
      client_name: "n".repeat(200),
      redirect_uris: Array.from({ length: 10 }, (_, i) => uriOf(2000, i)),
      client_uri: `https://client.example/${"u".repeat(1977)}`,
      token_endpoint_auth_method: "none",
    });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { client_name: string }).client_name).toHaveLength(200);
  });

  it("refuses a client_name longer than 200 characters, naming it", async () => {
    const refused = await refusal(await register({ client_name: "n".repeat(201) }));
    expect(refused).toMatchObject({ status: 400, error: "invalid_client_metadata" });
    expect(refused.error_description).toContain("client_name");
  });

  it("refuses a localized client_name longer than 200 characters, naming it", async () => {
    const refused = await refusal(await register({ "client_name#fr": "n".repeat(201) }));
    expect(refused).toMatchObject({ status: 400, error: "invalid_client_metadata" });
    expect(refused.error_description).toContain("client_name#fr");
  });

  it("refuses more than 10 redirect URIs with invalid_redirect_uri", async () => {
    const uris = Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:5555/cb${i}`);
    const refused = await refusal(await register({ redirect_uris: uris }));
    expect(refused).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
    expect(refused.error_description).toContain("redirect_uris");
  });

  it("refuses a redirect URI longer than 2000 characters with invalid_redirect_uri, naming which", async () => {
    const refused = await refusal(await register({ redirect_uris: [REDIRECT_URI, uriOf(2001)] }));
    expect(refused).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
    expect(refused.error_description).toContain("redirect_uris[1]");
  });

  it.each(["client_uri", "logo_uri", "policy_uri", "tos_uri"])(
    "refuses a %s longer than 2000 characters, naming it",
    async (field) => {
      const refused = await refusal(await register({ [field]: `https://client.example/${"u".repeat(1978)}` }));
      expect(refused).toMatchObject({ status: 400, error: "invalid_client_metadata" });
      expect(refused.error_description).toContain(field);
    },
  );

  it("refuses a body larger than 64 KiB with 413", async () => {
    const refused = await refusal(await register({ contacts: ["c".repeat(70_000)] }));
    expect(refused).toMatchObject({ status: 413, error: "invalid_request" });
  });
});

describe("the authorization server metadata", () => {
  async function metadata() {
    return (await (await worker("/.well-known/oauth-authorization-server")).json()) as {
      issuer: string;
      grant_types_supported: string[];
      response_types_supported: string[];
      token_endpoint_auth_methods_supported: string[];
      code_challenge_methods_supported: string[];
      client_id_metadata_document_supported: boolean;
    };
  }

  it("advertises grant types and response types registration takes", async () => {
    const advertised = await metadata();
    expect(advertised.issuer).toBe(ORIGIN);
    const response = await register({
      grant_types: advertised.grant_types_supported,
      response_types: advertised.response_types_supported,
      token_endpoint_auth_method: "none",
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      grant_types: advertised.grant_types_supported,
      response_types: advertised.response_types_supported,
    });
  });

  it("advertises token endpoint authentication methods registration takes, and private_key_jwt for metadata documents", async () => {
    const advertised = await metadata();
    const registered = advertised.token_endpoint_auth_methods_supported.filter((m) => m !== "private_key_jwt");
    expect(registered.sort()).toEqual(["client_secret_basic", "client_secret_post", "none"]);
    for (const method of registered) {
      const response = await register({ token_endpoint_auth_method: method });
      expect(response.status, method).toBe(201);
      expect(((await response.json()) as { token_endpoint_auth_method: string }).token_endpoint_auth_method).toBe(
        method,
      );
    }
    expect(advertised.client_id_metadata_document_supported).toBe(true);
    expect((await register({ token_endpoint_auth_method: "private_key_jwt" })).status).toBe(400);
  });

  it("advertises PKCE S256 only, and an authorization request with plain is refused", async () => {
    const advertised = await metadata();
    expect(advertised.code_challenge_methods_supported).toEqual(["S256"]);
    const registered = (await (await register({ token_endpoint_auth_method: "none" })).json()) as { client_id: string };
    const query = new URLSearchParams({
      response_type: "code",
      client_id: registered.client_id,
      redirect_uri: REDIRECT_URI,
      code_challenge: "abc",
      code_challenge_method: "plain",
      state: "s",
    });
    const response = await worker(`/authorize?${query}`, { redirect: "manual" });
    const location = new URL(response.headers.get("location") ?? "http://none");
    expect(location.searchParams.get("error")).toBe("invalid_request");
  });

  it("refuses at registration a method it does not advertise", async () => {
    const refused = await refusal(await register({ token_endpoint_auth_method: "client_secret_jwt" }));
    expect(refused).toMatchObject({ status: 400, error: "invalid_client_metadata" });
  });
});

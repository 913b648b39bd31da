// The OAuth and sign-in doors take any input (issue 40): generated requests (over-long ids, codes, tokens, names and
// URIs; unicode and control characters; JSON, text, empty and broken multipart bodies; unknown grant types; odd
// methods) thrown at /authorize, /oauth/token, /oauth/register, /oauth/revoke, /mcp and /auth/* through the Worker's
// entry are each answered below 500, with no stack text in the body.
import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import { anyText, fieldsOf, headerText, keepsItsShape, oddMethod, query, type Sent } from "../fixtures/door-fuzz";
import { TEST_KEYS } from "../fixtures/keys";
import { browserSignedIn, RESOURCE, registerClient } from "../fixtures/mcp-oauth";
import { REDIRECT_URI } from "../oauth/client-flow.ts";

/** Runs per door: enough to reach each branch the generators aim at, few enough for the file to stay fast. */
const RUNS = 50;

/** Something shaped as this server's tokens and codes (`user:grant:secret`), with parts of any length. */
const tokenShaped = fc
  .tuple(anyText, anyText, anyText)
  .map((parts) => parts.join(":"))
  .filter((token) => token.length <= 30_000);
const tokenText = fc.oneof(anyText, tokenShaped);
const headerToken = fc.oneof(
  headerText,
  fc.tuple(headerText, headerText, headerText).map((parts) => parts.map((p) => p.replace(/:/g, "")).join(":")),
);

/**
 * A body and the content type it is sent with (or none): mostly the kind the door reads (`main`), with the door's
 * fields, else JSON, text, empty, broken multipart, bytes or a content type of any name.
 */
function bodyOf(
  fields: fc.Arbitrary<Record<string, string>>,
  main: "form" | "json",
): fc.Arbitrary<Pick<Sent, "headers" | "body">> {
  const form = fields.map((f) => ({
    headers: { "content-type": "application/x-www-form-urlencoded" } as Record<string, string>,
    body: new URLSearchParams(f).toString(),
  }));
  const json = fc
    .oneof(
      fields,
      fc.json({ maxDepth: 3 }).map((text) => JSON.parse(text) as unknown),
    )
    .map((value) => ({
      headers: { "content-type": "application/json" },
      body: JSON.stringify(value),
    }));
  const brokenJson = anyText.map((text) => ({ headers: { "content-type": "application/json" }, body: `{${text}` }));
  const plain = anyText.map((text) => ({ headers: { "content-type": "text/plain" }, body: text }));
  const empty = fc.constantFrom<Pick<Sent, "headers" | "body">>(
    { headers: {}, body: "" },
    { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" },
    { headers: { "content-type": "application/json" }, body: "" },
    { headers: {} },
  );
  const brokenMultipart = fc.tuple(headerText, anyText).map(([boundary, text]) => ({
    headers: { "content-type": `multipart/form-data; boundary=${boundary.replace(/[;"]/g, "") || "b"}` },
    body: `--not-the-boundary\r\ncontent-disposition: form-data; name="handle"\r\n\r\n${text}\r\n--not-the-boundary--\r\n`,
  }));
  const multipartWithoutBoundary = anyText.map((text) => ({
    headers: { "content-type": "multipart/form-data" },
    body: text,
  }));
  const bytes = fc.uint8Array({ maxLength: 2000 }).map((body) => ({
    headers: { "content-type": "application/octet-stream" },
    body,
  }));
  const oddType = fc
    .tuple(headerText, anyText)
    .map(([type, text]) => ({ headers: { "content-type": type }, body: text }));
  return fc.oneof(
    { arbitrary: main === "form" ? form : json, weight: 8 },
    form,
    json,
    brokenJson,
    plain,
    empty,
    brokenMultipart,
    multipartWithoutBoundary,
    bytes,
    oddType,
  );
}

// ---- The doors --------------------------------------------------------------------------------------------------

let clientId = "";
let sessionCookie = "";

beforeAll(async () => {
  clientId = await registerClient("Fuzzed Client");
  sessionCookie = await browserSignedIn(TEST_KEYS.chat.key);
});

/** A client id: the registered client's, or generated. */
const someClientId = () => fc.oneof(fc.constant(clientId), anyText);
/** A redirect URI: the registered one, or generated. */
const someRedirectUri = fc.oneof(
  fc.constant(REDIRECT_URI),
  anyText,
  anyText.map((text) => `https://x.example/${text}`),
);
/** Cookies: none, the signed-in browser's, or generated. */
const someCookie = () =>
  fc.oneof(
    fc.constant<Record<string, string>>({}),
    fc.constant({ cookie: sessionCookie }),
    headerText.map((text) => ({ cookie: `__Host-aptix_session=${text}; __Host-oauth-consent-x=${text}` })),
  );

describe("the OAuth and sign-in doors, given any request", () => {
  it("GET /authorize answers below 500, without stack text", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            response_type: fc.oneof(fc.constant("code"), anyText),
            client_id: someClientId(),
            redirect_uri: someRedirectUri,
            code_challenge: fc.oneof(fc.constant("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"), anyText),
            code_challenge_method: fc.oneof(fc.constantFrom("S256", "plain"), anyText),
            state: anyText,
            scope: fc.oneof(fc.constant("chat"), anyText),
            resource: fc.oneof(fc.constant(RESOURCE), anyText),
          },
          { requiredKeys: [] },
        ),
        someCookie(),
        fc.constantFrom("GET", "HEAD"),
        async (fields, cookie, method) => {
          await keepsItsShape({ method, path: `/authorize${query(fields)}`, headers: cookie });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /authorize (and odd methods) answers below 500, without stack text", async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyOf(fieldsOf(["handle", "decision"], fc.oneof(fc.constantFrom("allow", "deny"), anyText)), "form"),
        someCookie(),
        fc.oneof(fc.constant("POST"), oddMethod),
        async (body, cookie, method) => {
          await keepsItsShape({ method, path: "/authorize", headers: { ...body.headers, ...cookie }, body: body.body });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /oauth/token answers below 500, without stack text", async () => {
    const names = [
      "grant_type",
      "code",
      "refresh_token",
      "client_id",
      "client_secret",
      "code_verifier",
      "redirect_uri",
      "resource",
      "scope",
      "token",
      "token_type_hint",
      "client_assertion",
      "client_assertion_type",
    ];
    const value = fc.oneof(
      fc.constantFrom("authorization_code", "refresh_token", "client_credentials", "password", "implicit"),
      fc.constant(clientId),
      tokenText,
    );
    await fc.assert(
      fc.asyncProperty(
        bodyOf(fieldsOf(names, value), "form"),
        fc.option(headerText.map((text) => `Basic ${btoa(text)}`)),
        fc.oneof(fc.constant("POST"), oddMethod),
        async (body, basic, method) => {
          const headers = { ...body.headers, ...(basic ? { authorization: basic } : {}) };
          await keepsItsShape({ method, path: "/oauth/token", headers, body: body.body });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /oauth/revoke answers below 500, without stack text", async () => {
    const value = fc.oneof(fc.constantFrom("access_token", "refresh_token"), fc.constant(clientId), tokenText);
    await fc.assert(
      fc.asyncProperty(
        bodyOf(fieldsOf(["token", "token_type_hint", "client_id", "client_secret"], value), "form"),
        fc.oneof(fc.constant("POST"), oddMethod),
        async (body, method) => {
          await keepsItsShape({ method, path: "/oauth/revoke", headers: body.headers, body: body.body });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /oauth/register answers below 500, without stack text", async () => {
    const uris = fc.array(someRedirectUri, { maxLength: 30 });
    const metadata = fc.record(
      {
        client_name: anyText,
        redirect_uris: fc.oneof(uris, anyText),
        client_uri: anyText,
        logo_uri: anyText,
        policy_uri: anyText,
        tos_uri: anyText,
        jwks_uri: anyText,
        contacts: fc.array(anyText, { maxLength: 5 }),
        grant_types: fc.array(fc.oneof(fc.constantFrom("authorization_code", "refresh_token"), anyText), {
          maxLength: 4,
        }),
        response_types: fc.array(fc.oneof(fc.constant("code"), anyText), { maxLength: 3 }),
        token_endpoint_auth_method: fc.oneof(
          fc.constantFrom("none", "client_secret_basic", "client_secret_post", "private_key_jwt", "tls_client_auth"),
          anyText,
        ),
        scope: anyText,
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      metadata.map((value) => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(value) })),
      bodyOf(fieldsOf(["client_name", "redirect_uris"], anyText), "json"),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.oneof(fc.constant("POST"), oddMethod), async (sent, method) => {
        await keepsItsShape({ method, path: "/oauth/register", headers: sent.headers, body: sent.body });
      }),
      { numRuns: RUNS },
    );
  });

  it("/mcp answers below 500, without stack text", async () => {
    const authorization = fc.oneof(
      fc.constant<Record<string, string>>({}),
      fc.constant({ authorization: `Bearer ${TEST_KEYS.chat.key}` }),
      headerToken.map((token) => ({ authorization: `Bearer ${token}` })),
      headerText.map((text) => ({ authorization: text })),
    );
    await fc.assert(
      fc.asyncProperty(
        bodyOf(fieldsOf(["jsonrpc", "method", "id"], anyText), "json"),
        authorization,
        fc.oneof(fc.constant("POST"), oddMethod),
        async (body, auth, method) => {
          const headers = { accept: "application/json, text/event-stream", ...body.headers, ...auth };
          await keepsItsShape({ method, path: "/mcp", headers, body: body.body });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("/a2a/* answers below 500, without stack text, whatever token is sent", async () => {
    const path = fc.constantFrom("/a2a/jsonrpc", "/a2a/rest/tasks", "/a2a/rest/message:send", "/a2a");
    const authorization = fc.oneof(
      fc.constant<Record<string, string>>({}),
      headerToken.map((token) => ({ authorization: `Bearer ${token}` })),
      headerText.map((text) => ({ authorization: text })),
    );
    await fc.assert(
      fc.asyncProperty(
        path,
        bodyOf(fieldsOf(["jsonrpc", "method", "id"], anyText), "json"),
        authorization,
        fc.oneof(fc.constant("POST"), oddMethod),
        async (at, body, auth, method) => {
          const headers = { "a2a-version": "1.0", ...body.headers, ...auth };
          await keepsItsShape({ method, path: at, headers, body: body.body });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("/auth/* answers below 500, without stack text", async () => {
    const path = fc.constantFrom(
      "/auth/login",
      "/auth/callback",
      "/auth/session",
      "/auth/me",
      "/auth/logout",
      "/auth/providers",
    );
    const params = fieldsOf(["return_to", "code", "state", "iss", "error", "error_description"], anyText);
    const extra = fc.record(
      { "x-csrf-token": headerText, authorization: headerToken.map((token) => `Bearer ${token}`) },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        path,
        params,
        bodyOf(fieldsOf(["api_key", "return_to"], fc.oneof(fc.constant(TEST_KEYS.chat.key), anyText)), "form"),
        someCookie(),
        extra,
        oddMethod,
        async (door, fields, body, cookie, headers, method) => {
          await keepsItsShape({
            method,
            path: `${door}${query(fields)}`,
            headers: { ...body.headers, ...cookie, ...headers },
            body: body.body,
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /auth/session (the key sign-in form) answers below 500, without stack text", async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyOf(fieldsOf(["api_key", "return_to"], fc.oneof(fc.constant(TEST_KEYS.chat.key), anyText)), "form"),
        someCookie(),
        async (body, cookie) => {
          await keepsItsShape({
            method: "POST",
            path: "/auth/session",
            headers: { ...body.headers, ...cookie },
            body: body.body,
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});

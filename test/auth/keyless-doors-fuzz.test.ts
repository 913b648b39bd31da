// The doors that take input from callers without credentials, beyond the OAuth endpoints' (oauth-doors-fuzz.test.ts):
// the session's WebSocket door (its ticket is its credential), single sign-on's /auth/login and /auth/callback with
// sign-in configured (a flow begun for real, finished with generated answers), the key check every other route
// passes through (x-api-key, a Cloudflare Access assertion with Access configured, the D1 bookmark, Origin), and the
// OAuth metadata documents. Each answer is below 500, with no stack text, and a refusal is in the wire's error shape.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  anyText,
  type DoorFetch,
  fieldsOf,
  headerText,
  isOpenAiError,
  keepsItsShape,
  oddMethod,
  query,
} from "../fixtures/door-fuzz";
import { beginSignIn, signedByProvider, ssoWorker } from "../fixtures/idp";
import { TEST_KEYS } from "../fixtures/keys";
import { createSession } from "../fixtures/sessions";
import { issueTicket } from "../fixtures/socket";
import { workerWith } from "../passthrough/harness";

/** Runs per door, as in oauth-doors-fuzz.test.ts. */
const RUNS = 50;

/** A 64-digit hex id no session has (its object would be made by the id, not found). */
const unknownId = fc.stringMatching(/^[0-9a-f]{64}$/);

/** A value for a query parameter: absent (undefined), or text. */
const queryText = fc.option(anyText, { nil: undefined });

function withoutUndefined(fields: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** Absent three times in four, else a value of `arbitrary`. */
function seldom<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary, weight: 1 });
}

const fetchOf =
  (worker: { fetch: (input: string, init?: RequestInit) => Promise<Response> }): DoorFetch =>
  (input, init) =>
    worker.fetch(input, init);

describe("the doors that need no key, given any request", () => {
  let sessionId = "";

  beforeAll(async () => {
    sessionId = await createSession();
  });

  it("the session's WebSocket door answers 101 or an OpenAI-shaped refusal below 500, whatever id, ticket and afterSeq", async () => {
    const id = fc.oneof(
      { arbitrary: fc.constant("known"), weight: 4 },
      unknownId,
      unknownId.map((hex) => hex.toUpperCase()),
      unknownId.map((hex) => hex.slice(1)),
      unknownId.map((hex) => `${hex}0`),
      anyText.map((text) => encodeURIComponent(text)),
      fc.constantFrom("%ZZ", "..", "%2e%2e"),
    );
    const ticket = fc.oneof(
      fc.constant<string | undefined>(undefined),
      { arbitrary: fc.constant("issued"), weight: 3 },
      fc.constant("wst_made_up"),
      anyText,
    );
    const afterSeq = fc.oneof(
      queryText,
      fc.constantFrom("-1", "1e309", "NaN", "99999999999999999999", "0x10", "٣", "1.5"),
      fc.nat().map(String),
    );
    const upgrade = fc.oneof(
      { arbitrary: fc.constantFrom("websocket", "WebSocket"), weight: 3 },
      fc.constant(undefined),
      headerText,
    );
    const origin = fc.option(fc.constantFrom("https://evil.example", "null", "https://aptix.test"), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(
        id,
        ticket,
        afterSeq,
        fc.boolean(),
        upgrade,
        origin,
        fc.constantFrom("GET", "GET", "HEAD", "POST"),
        async (door, sent, seq, repeated, up, from, method) => {
          const at = door === "known" ? sessionId : door;
          const value = sent === "issued" ? await issueTicket(sessionId) : sent;
          const params = new URLSearchParams(withoutUndefined({ ticket: value, afterSeq: seq }));
          if (repeated && value !== undefined) params.append("ticket", value);
          const search = params.toString();
          const headers = withoutUndefined({ upgrade: up, origin: from });
          const { status, text } = await keepsItsShape({
            method,
            path: `/context/sessions/${at}/ws${search ? `?${search}` : ""}`,
            headers,
          });
          if (status !== 101 && method !== "HEAD") expect(isOpenAiError(text), `${status}: ${text}`).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("/auth/login with single sign-on on answers below 500, and sends the browser only to the provider", async () => {
    const worker = ssoWorker();
    const returnTo = fc.oneof(
      anyText,
      fc.constantFrom("//evil.example", "/\\evil.example", "/\t/evil.example", "https://evil.example/", "/ok/path"),
      fc.integer({ min: 2_000, max: 9_000 }).map((n) => `/${"p".repeat(n)}`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.option(returnTo, { nil: undefined }),
        fc.boolean(),
        fc.constantFrom("GET", "HEAD"),
        async (to, repeated, method) => {
          const params = new URLSearchParams(withoutUndefined({ return_to: to }));
          if (repeated && to !== undefined) params.append("return_to", "/twice");
          const search = params.toString();
          const { status, response } = await keepsItsShape(
            { method, path: `/auth/login${search ? `?${search}` : ""}`, headers: {} },
            fetchOf(worker),
          );
          if (status === 302) {
            const location = new URL(response?.headers.get("location") ?? "", "https://aptix.test");
            expect(location.origin).toBe(new URL(env.TEST_IDP_ISSUER).origin);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("/auth/callback of a sign-in begun for real answers below 500, and sends the browser back only to a path of ours", async () => {
    const worker = ssoWorker();
    const stateOf = fc.constantFrom("begun", "begun", "other", "none");
    const answerFields = fieldsOf(["code", "iss", "error", "error_description", "response"], anyText);
    const cookieOf = fc.constantFrom("begun", "begun", "none", "junk");
    await fc.assert(
      fc.asyncProperty(
        stateOf,
        answerFields,
        cookieOf,
        fc.boolean(),
        // Where the flow was begun to return (its refusals are the login door's property, above).
        fc.constantFrom("", "/", "/chat?x=1", "/admin.html#keys"),
        async (stateKind, fields, cookieKind, twice, returnTo) => {
          const begun = await beginSignIn(worker, returnTo === "" ? "" : query({ return_to: returnTo }));
          const state = new URL(begun.authorizeUrl).searchParams.get("state") ?? "";
          const params = new URLSearchParams(fields);
          if (stateKind === "begun") params.set("state", state);
          if (stateKind === "other") params.set("state", `${state}x`);
          if (twice) params.append("state", state);
          const cookies: Record<string, Record<string, string>> = {
            begun: { cookie: begun.stateCookie },
            junk: { cookie: "__Host-aptix_sign_in=not-a-flow" },
            none: {},
          };
          const cookie = cookies[cookieKind] ?? {};
          const { status, response } = await keepsItsShape(
            { method: "GET", path: `/auth/callback?${params}`, headers: cookie },
            fetchOf(worker),
          );
          if (status === 302 || status === 303) {
            const location = response?.headers.get("location") ?? "";
            expect(location.startsWith("/") && !location.startsWith("//") && !location.startsWith("/\\")).toBe(true);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("the key check answers below 500 in the wire's error shape, whatever x-api-key, bookmark and origin", async () => {
    const door = fc.constantFrom(
      { method: "GET", path: "/modes" },
      { method: "POST", path: "/v1/chat/completions" },
      { method: "POST", path: "/v1/messages" },
      { method: "GET", path: "/openapi.json" },
      { method: "GET", path: "/no/such/route" },
    );
    const apiKey = fc.option(
      fc.oneof(fc.constant(TEST_KEYS.chat.key), headerText, fc.constantFrom(" ", "\t", "Bearer x")),
      { nil: undefined },
    );
    const authorization = fc.option(
      fc.oneof(
        headerText.map((text) => `Bearer ${text}`),
        headerText,
        fc.constant(`Bearer ${TEST_KEYS.chat.key}`),
      ),
      { nil: undefined },
    );
    const bookmark = seldom(
      fc.oneof(headerText, fc.constantFrom("", "00000000-0000-0000-0000-000000000000", "0000000a-00000000")),
    );
    // Mostly absent: a foreign origin is refused before the key is read, and the key check is what is aimed at.
    const origin = seldom(fc.oneof(fc.constantFrom("null", "https://evil.example"), headerText));
    const fetchSite = seldom(fc.oneof(fc.constantFrom("cross-site", "same-origin", "none"), headerText));
    await fc.assert(
      fc.asyncProperty(
        door,
        apiKey,
        authorization,
        bookmark,
        origin,
        fetchSite,
        fc.option(anyText, { nil: undefined }),
        async (at, key, auth, mark, from, site, body) => {
          const headers = withoutUndefined({
            "x-api-key": key,
            authorization: auth,
            "x-d1-bookmark": mark,
            origin: from,
            "sec-fetch-site": site,
            "content-type": body === undefined ? undefined : "application/json",
          });
          const { status, text } = await keepsItsShape({ ...at, headers, ...(body === undefined ? {} : { body }) });
          if (status < 400) return;
          if (at.path === "/v1/messages") {
            expect(JSON.parse(text), text).toMatchObject({ type: "error", error: { type: expect.any(String) } });
          } else {
            expect(isOpenAiError(text), `${status}: ${text}`).toBe(true);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("a Cloudflare Access assertion of any shape answers below 500, refused in OpenAI's shape", async () => {
    const aud = "access-app-aud-fuzz";
    const worker = workerWith({
      CF_ACCESS_TEAM_DOMAIN: env.TEST_ACCESS_TEAM,
      CF_ACCESS_AUD: aud,
      CF_ACCESS_ORG: "acme",
    } as Partial<Cloudflare.Env>);
    const b64 = (value: unknown) => {
      const bytes = new TextEncoder().encode(JSON.stringify(value));
      return btoa(String.fromCharCode(...bytes))
        .replace(/=+$/, "")
        .replace(/\+/g, "-")
        .replace(/\//g, "_");
    };
    const header = fc.record(
      {
        alg: fc.oneof(fc.constantFrom("none", "HS256", "RS256", "ES256"), anyText),
        kid: fc.oneof(anyText, fc.constant("unknown")),
        crit: fc.array(anyText, { maxLength: 2 }),
        b64: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    const claims = fc.record(
      {
        aud: fc.oneof(fc.constant([aud]), fc.constant(aud), anyText, fc.array(anyText, { maxLength: 2 })),
        email: fc.oneof(fc.constant("alice@example.com"), anyText, fc.integer()),
        sub: anyText,
        nbf: fc.integer(),
        exp: fc.integer(),
      },
      { requiredKeys: [] },
    );
    const assertion = fc.oneof(
      headerText,
      fc.constantFrom("a.b.c", "..", "e30.e30.", "e30.e30.e30"),
      fc.tuple(header, claims, anyText).map(([h, c, signature]) => `${b64(h)}.${b64(c)}.${b64(signature)}`),
      // Signed by the team for real: the claims, not the signature, are what is generated.
      claims.map((c) => ({ signed: c })),
    );
    await fc.assert(
      fc.asyncProperty(assertion, fc.constantFrom("/auth/me", "/modes", "/auth/session"), async (sent, path) => {
        const value = typeof sent === "string" ? sent : await signedByProvider(sent.signed, env.TEST_ACCESS_TEAM);
        const { status, text } = await keepsItsShape(
          { method: "GET", path, headers: { "cf-access-jwt-assertion": value } },
          fetchOf(worker),
        );
        if (status >= 400) expect(isOpenAiError(text), `${status}: ${text}`).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("the OAuth metadata documents answer below 500, without stack text, whatever method, path and headers", async () => {
    const path = fc.oneof(
      fc.constantFrom(
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/a2a",
        "/.well-known/oauth-authorization-server/mcp",
      ),
      fc
        .tuple(
          fc.constantFrom("/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource"),
          fc.oneof(
            anyText.map((text) => encodeURIComponent(text)),
            fc.constantFrom("/mcp/x", "/%2e%2e", "/.."),
          ),
        )
        .map(([base, tail]) => `${base}${tail.startsWith("/") ? tail : `/${tail}`}`),
    );
    const headers = fc.record(
      {
        origin: fc.oneof(fc.constantFrom("https://evil.example", "null"), headerText),
        accept: headerText,
        "access-control-request-method": fc.constantFrom("GET", "POST", "PROPFIND"),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(path, headers, oddMethod, async (at, sent, method) => {
        await keepsItsShape({ method, path: at, headers: sent });
      }),
      { numRuns: RUNS },
    );
  });
});

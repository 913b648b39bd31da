// Every HTML page the app answers (the authorize step's sign-in, consent and problem pages) forbids framing:
// Content-Security-Policy with frame-ancestors 'none' (a page's own policy kept), and X-Frame-Options DENY.
import { describe, expect, it } from "vitest";
import { withoutFraming } from "../../src/page-headers";
import { TEST_KEYS } from "../fixtures/keys";
import {
  answerConsent,
  authorizeQuery,
  browserSignedIn,
  consentPage,
  registerClient,
  worker,
} from "../fixtures/mcp-oauth";
import { pkce } from "../oauth/client-flow.ts";

/** A Content-Security-Policy header's directives, by name (several policies in one header are read as one list). */
function directives(header: string | null): Map<string, string> {
  const parsed = (header ?? "")
    .split(/[;,]/)
    .map((directive) => directive.trim().split(/\s+/))
    .filter(([name]) => name);
  return new Map(parsed.map(([name = "", ...values]) => [name.toLowerCase(), values.join(" ")]));
}

function expectNotFramed(response: Response): void {
  expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  expect(directives(response.headers.get("content-security-policy")).get("frame-ancestors")).toBe("'none'");
  expect(response.headers.get("x-frame-options")).toBe("DENY");
}

describe("the app's HTML pages", () => {
  it("forbid framing the sign-in page of the authorize step", async () => {
    const clientId = await registerClient("Framed Sign-in");
    const { challenge } = await pkce();
    expectNotFramed(await worker(authorizeQuery({ clientId, challenge })));
  });

  it("forbid framing the consent page", async () => {
    const clientId = await registerClient("Framed Consent");
    const { challenge } = await pkce();
    const page = await consentPage({ clientId, challenge }, await browserSignedIn(TEST_KEYS.chat.key));
    expect(page.handle).toBeTruthy();
    expectNotFramed(page.response);
  });

  it("forbid framing the authorize step's problem page", async () => {
    const { challenge } = await pkce();
    expectNotFramed(await worker(authorizeQuery({ clientId: "no-such-client", challenge })));
  });

  it("forbid framing the page refusing a consent answer", async () => {
    const bob = await browserSignedIn(TEST_KEYS.chat.key);
    expectNotFramed(await answerConsent("no-page-had-this-handle", [bob], "allow"));
  });
});

describe("a page's own policy", () => {
  it("is kept, with frame-ancestors 'none' added", () => {
    const policy = directives(withoutFraming("default-src 'self'; script-src 'self'"));
    expect(Object.fromEntries(policy)).toEqual({
      "default-src": "'self'",
      "script-src": "'self'",
      "frame-ancestors": "'none'",
    });
  });

  it("is kept as it is when it names frame-ancestors already", () => {
    expect(withoutFraming("default-src 'self'; frame-ancestors 'none'")).toBe(
      "default-src 'self'; frame-ancestors 'none'",
    );
  });
});

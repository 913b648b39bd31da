// The consent page is bound to the person it was shown to: an answer carried with another person's browser session
// (with the binding cookie of the browser it was shown in) is refused, grants nothing to either, and leaves the
// handle to the person it was shown to.
import { describe, expect, it } from "vitest";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { answerConsent, browserSignedIn, consentPage, registerClient, worker } from "../fixtures/mcp-oauth";
import { pkce } from "../oauth/client-flow.ts";

async function grantedClients(key: string): Promise<string[]> {
  const response = await worker("/context/grants", { headers: authHeaders(key) });
  return ((await response.json()) as { grants: { clientId: string }[] }).grants.map((grant) => grant.clientId);
}

/** A consent page shown to bob (the chat key's user, of org-a), and a browser of alice (the admin key's) beside. */
async function shownToBob(name: string) {
  const clientId = await registerClient(name);
  const { challenge } = await pkce();
  const bob = await browserSignedIn(TEST_KEYS.chat.key);
  const page = await consentPage({ clientId, challenge }, bob);
  expect(page.handle).toBeTruthy();
  const alice = await browserSignedIn(TEST_KEYS.admin.key);
  return { clientId, bob, alice, handle: page.handle ?? "", binding: page.cookies };
}

describe("the consent page's answer", () => {
  it("is refused with 403 when carried with another person's browser session, sending the browser nowhere", async () => {
    const { alice, handle, binding } = await shownToBob("Someone Else's Consent");
    const answered = await answerConsent(handle, [alice, ...binding], "allow");
    expect(answered.status).toBe(403);
    expect(answered.headers.get("location")).toBeNull();
  });

  it("grants nothing to either person when carried with another person's browser session", async () => {
    const { clientId, alice, handle, binding } = await shownToBob("Nothing Granted Consent");
    await answerConsent(handle, [alice, ...binding], "allow");
    expect(await grantedClients(TEST_KEYS.chat.key)).not.toContain(clientId);
    expect(await grantedClients(TEST_KEYS.admin.key)).not.toContain(clientId);
  });

  it("cannot be denied by another person either", async () => {
    const { alice, handle, binding } = await shownToBob("Denied By Another");
    const answered = await answerConsent(handle, [alice, ...binding], "deny");
    expect(answered.status).toBe(403);
    expect(answered.headers.get("location")).toBeNull();
  });

  it("stays the answer of the person it was shown to after another person's was refused", async () => {
    const { clientId, bob, alice, handle, binding } = await shownToBob("Still Bob's Consent");
    await answerConsent(handle, [alice, ...binding], "allow");
    const answered = await answerConsent(handle, [bob, ...binding], "allow");
    expect(new URL(answered.headers.get("location") ?? "http://none").searchParams.get("code")).toBeTruthy();
    expect(await grantedClients(TEST_KEYS.chat.key)).toContain(clientId);
    expect(await grantedClients(TEST_KEYS.admin.key)).not.toContain(clientId);
  });

  it("is refused with 403 for a handle no page was shown with", async () => {
    const bob = await browserSignedIn(TEST_KEYS.chat.key);
    const answered = await answerConsent("no-page-had-this-handle", [bob], "allow");
    expect(answered.status).toBe(403);
  });
});

// Single sign-on in a real browser (Debian's Chromium) against `wrangler dev` as `npm start` runs it, pointed at a
// real OpenID provider (oidc-provider, test/idp/, as `npm run idp:dev` starts it): a person signs in on the
// provider's login page, chats in the console and signs out (the session ends server-side); a session is refused
// once an admin disables its user; a forged cross-site form POST is refused and changes nothing.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { freePort, type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { type RunningIdp, startIdp } from "../idp/oidc-idp.ts";
import { completedTurns, launchChromium, waitForTurnAfter } from "./support.ts";

const CLIENT = { client_id: "aptix-e2e", client_secret: "aptix-e2e-secret" };

let worker: LocalWorker;
let idp: RunningIdp;
let browser: Browser;

before(async () => {
  // The provider's address is known before the Worker starts (its setting); the Worker's before the provider
  // starts (its redirect URI).
  const idpPort = await freePort();
  const issuer = `http://127.0.0.1:${idpPort}`;
  worker = await startLocalWorker({
    vars: {
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: CLIENT.client_id,
      OIDC_CLIENT_SECRET: CLIENT.client_secret,
      // The org of the local key, so its admin (dev-key) manages the people who sign in.
      OIDC_ORG: "dev-org",
      OIDC_SCOPES: "openid email profile groups",
      OIDC_ADMIN_GROUPS: "aptix-admins",
    },
  });
  idp = await startIdp({
    port: idpPort,
    clients: [{ ...CLIENT, redirect_uris: [`${worker.url}/auth/callback`] }],
    testControl: false,
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await worker?.stop();
  await idp?.close();
});

/** Signs `user` in from the console's sign-in page, through the provider's login page; the console is shown. */
async function signInAs(user: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(worker.url);
  await page.getByRole("link", { name: "Sign in with your company account" }).click();
  await page.locator("input[name=login]").fill(user);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#app").waitFor({ state: "visible" });
  return { context, page };
}

async function sessionCookie(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies(worker.url)).find((c) => c.name === "__Host-aptix_session");
  assert.ok(cookie, "a session cookie");
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.secure, true);
  assert.equal(cookie.sameSite, "Lax");
  return `${cookie.name}=${cookie.value}`;
}

const me = (cookie: string) => fetch(`${worker.url}/auth/me`, { headers: { cookie } });

describe("single sign-on in the console", () => {
  it("signs a person in at the provider, lets them chat, and ends the session at sign-out", async () => {
    const { context, page } = await signInAs("bob");
    const cookie = await sessionCookie(context);
    assert.deepEqual(await (await me(cookie)).json().then((m) => [m.user.id, m.via]), [
      "bob@example.com",
      "browser_session",
    ]);
    const turns = await completedTurns(page);
    await page.locator("#composer-input").fill("Hello from single sign-on.");
    await page.keyboard.press("Enter");
    await waitForTurnAfter(page, turns);
    assert.ok(await page.locator("#conversation > li.message.assistant").last().isVisible());
    assert.equal(await page.evaluate(() => JSON.stringify(localStorage).includes("aptix_session")), false);
    await page.locator("#sign-out").click();
    await page.locator("#sign-in").waitFor({ state: "visible" });
    assert.equal((await me(cookie)).status, 401, "the old cookie no longer signs anyone in");
    await context.close();
  });

  it("opens the API reference at /docs with the browser session, asking for no key", async () => {
    const { context, page } = await signInAs("bob");
    await page.goto(`${worker.url}/docs/`);
    await page.locator(".opblock").first().waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("#docs-key-form").isHidden(), true, "no key asked for");
    assert.equal(await page.locator("#docs-status").innerText(), "Signed in with your console session.");
    await context.close();
  });

  it("refuses a browser session once an admin disables its user", async () => {
    const { context, page } = await signInAs("alice");
    const cookie = await sessionCookie(context);
    const disabled = await fetch(`${worker.url}/admin/users/${encodeURIComponent("alice@example.com")}`, {
      method: "PATCH",
      headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
      body: JSON.stringify({ disabled: true }),
    });
    assert.equal(disabled.status, 200);
    const refused = await me(cookie);
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).error.code, "user_disabled");
    await page.reload();
    await page.locator("#sign-in").waitFor({ state: "visible" });
    await context.close();
  });

  it("refuses a forged cross-site form POST made with the person's cookie, creating nothing", async () => {
    const { context, page } = await signInAs("bob");
    const cookie = await sessionCookie(context);
    const sessionsNow = async () =>
      (
        (await (await fetch(`${worker.url}/context/sessions`, { headers: { cookie } })).json()) as {
          sessions: unknown[];
        }
      ).sessions.length;
    const before = await sessionsNow();
    // A page of another origin on this machine (the same site for cookies: SameSite does not stop it).
    const attacker: Server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(`<!doctype html><form id="f" method="post" action="${worker.url}/context/sessions"
        enctype="text/plain"><input name='{"mode":"general","x":"' value='"}'></form>
        <script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    const address = attacker.address();
    try {
      const answered = page.waitForResponse((r) => r.url() === `${worker.url}/context/sessions`);
      await page.goto(`http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`);
      const response = await answered;
      assert.equal(response.status(), 403);
      assert.equal((await response.json()).error.code, "origin_not_allowed");
      assert.equal(await sessionsNow(), before);
    } finally {
      attacker.close();
      await context.close();
    }
  });
});

// An MCP client adds /mcp by its URL: the official MCP SDK client's OAuth flow (its `auth` with an
// OAuthClientProvider) against `wrangler dev` as `npm start` runs it. Discovery from the 401, dynamic client
// registration, authorization in a real browser (Debian's Chromium: sign in with the local key, the consent page's
// Allow clicked), the token exchange, tools/list and a send_message, a silent refresh, and a revoked grant refused
// (its access token, then its refresh token).
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { launchChromium } from "./support.ts";

/** The client's loopback redirect target: where the browser lands with the code after consent. */
class Callback {
  private server: Server;
  private waiting: ((query: URLSearchParams) => void) | null = null;
  url = "";

  constructor() {
    this.server = createServer((request, response) => {
      const query = new URL(request.url ?? "/", "http://callback").searchParams;
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("You can close this window.");
      this.waiting?.(query);
      this.waiting = null;
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/callback`;
  }

  next(): Promise<URLSearchParams> {
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  close(): void {
    this.server.close();
  }
}

/** An MCP client's OAuth state in memory; its browser is a Chromium page a person uses (the test clicks). */
class BrowserClientProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  stored: OAuthTokens | undefined;
  verifier = "";
  /** Whether the client may open the browser; after revocation the test says no, and counts the attempts. */
  mayOpenBrowser = true;
  browserOpenedWhenRefused = 0;
  private page: Page;
  private redirect: string;

  constructor(page: Page, redirect: string) {
    this.page = page;
    this.redirect = redirect;
  }

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "aptix e2e MCP client",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.mayOpenBrowser) {
      this.browserOpenedWhenRefused += 1;
      return;
    }
    // The person: signs in with the local key on the sign-in page, then reads the consent page and allows.
    await this.page.goto(url.href);
    await this.page.getByLabel("API key").fill("dev-key");
    await this.page.getByRole("button", { name: "Sign in" }).click();
    await this.page.getByRole("heading", { name: "Allow this application?" }).waitFor();
    await this.page.getByRole("button", { name: "Allow" }).click();
  }
}

let worker: LocalWorker;
let browser: Browser;
let callback: Callback;

before(async () => {
  worker = await startLocalWorker();
  browser = await launchChromium();
  callback = new Callback();
  await callback.listen();
});

after(async () => {
  await browser?.close();
  await worker?.stop();
  callback?.close();
});

describe("an MCP client with OAuth (the MCP SDK's own flow)", () => {
  it("connects by URL alone, chats, refreshes silently, and is refused once its grant is revoked", async () => {
    const mcpUrl = new URL("/mcp", worker.url);
    const page = await (await browser.newContext()).newPage();
    const provider = new BrowserClientProvider(page, callback.url);

    // 1. No token: the SDK discovers, registers and sends the browser to authorize.
    const landed = callback.next();
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await assert.rejects(new Client({ name: "e2e", version: "1" }).connect(first), UnauthorizedError);
    const query = await landed;
    assert.ok(provider.client?.client_id, "registered by dynamic client registration");
    assert.equal(query.get("iss"), worker.url);
    const code = query.get("code");
    assert.ok(code, `the browser came back with a code: ${query}`);

    // 2. The code for tokens, then MCP as the person who allowed it.
    await first.finishAuth(code);
    assert.ok(provider.stored?.refresh_token, "a refresh token");
    const client = new Client({ name: "e2e", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "send_message"));
    const started = await client.callTool({ name: "start_session", arguments: {} });
    const sessionId = String((started.structuredContent as { sessionId: string }).sessionId);
    const sent = await client.callTool({ name: "send_message", arguments: { sessionId, content: "Say hello." } });
    assert.equal((sent.structuredContent as { status: string }).status, "completed");

    // 3. An access token the server does not take (as an expired one): the SDK refreshes without the browser.
    const before = provider.stored;
    provider.stored = { ...(before as OAuthTokens), access_token: "expired:expired:expired" };
    provider.mayOpenBrowser = false;
    await client.listTools();
    assert.notEqual(provider.stored?.access_token, before?.access_token);
    assert.notEqual(provider.stored?.refresh_token, before?.refresh_token, "the refresh token was rotated");
    assert.equal(provider.browserOpenedWhenRefused, 0);

    // 4. The person revokes the grant in the console's Connected apps (the browser is still signed in, by the
    //    session the authorize step began): the client is refused from then on.
    const listed = await fetch(`${worker.url}/context/grants`, { headers: { authorization: "Bearer dev-key" } });
    const { grants } = (await listed.json()) as { grants: { id: string; clientName: string }[] };
    assert.ok(
      grants.some((g) => g.clientName === "aptix e2e MCP client"),
      JSON.stringify(grants),
    );
    await page.goto(worker.url);
    await page.locator("#app").waitFor({ state: "visible" });
    await page.getByRole("button", { name: "Connected apps" }).click();
    await page.getByRole("button", { name: "Revoke aptix e2e MCP client" }).click();
    await page.getByText("aptix e2e MCP client can no longer act for you.").waitFor();
    const refusal = await client.listTools().then(
      () => null,
      (error: unknown) => error,
    );
    // Its access token was refused, and so was the refresh: the grant is gone.
    assert.ok(refusal instanceof InvalidGrantError, String(refusal));
    await client.close();
  });
});

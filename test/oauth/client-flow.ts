// What an MCP client and the person behind it do to get an OAuth token for /mcp, over plain HTTP: register
// (RFC 7591), sign the browser in (an API key on the sign-in form), read and answer the consent page, exchange the
// code with its PKCE verifier. Web APIs only, so the Workers tests (through the Worker's entry) and the benchmarks
// (against `wrangler dev`) run the same steps.

/** Where the flow's requests go: a fetch of absolute URLs, and the Worker's origin. */
export interface OAuthDoor {
  origin: string;
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
}

export const REDIRECT_URI = "http://127.0.0.1:5555/callback";

/** The resource a token is asked for: the door's /mcp. */
export const resourceOf = (door: OAuthDoor) => `${door.origin}/mcp`;

/** The `name=value` pairs a response's Set-Cookie headers set (non-empty values only). */
export function cookiesOf(response: Response): string[] {
  return response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0] ?? "")
    .filter((pair) => /^[^=]+=.+/.test(pair));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

/** Registers a public client with `redirectUri`; answers its client_id. */
export async function registerClient(door: OAuthDoor, name = "Test MCP Client", redirectUri = REDIRECT_URI) {
  const response = await door.fetch(`${door.origin}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
  if (response.status !== 201) throw new Error(`registration answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { client_id: string }).client_id;
}

/** A browser signed in with `apiKey` (POST /auth/session): its session cookie. */
export async function browserSignedIn(door: OAuthDoor, apiKey: string): Promise<string> {
  const response = await door.fetch(`${door.origin}/auth/session`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ api_key: apiKey, return_to: "/" }),
    redirect: "manual",
  });
  const [cookie] = cookiesOf(response);
  if (response.status !== 302 || !cookie) throw new Error(`sign-in answered ${response.status}`);
  return cookie;
}

export interface AuthorizeOptions {
  clientId: string;
  /** The S256 challenge; null sends none. */
  challenge?: string | null;
  redirectUri?: string;
  resource?: string;
  state?: string;
}

/** The /authorize path a client sends the browser to. */
export function authorizePath(door: OAuthDoor, options: AuthorizeOptions): string {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: options.clientId,
    redirect_uri: options.redirectUri ?? REDIRECT_URI,
    state: options.state ?? "st-1",
    scope: "chat",
    resource: options.resource ?? resourceOf(door),
  });
  if (options.challenge !== null) {
    query.set("code_challenge", options.challenge ?? "");
    query.set("code_challenge_method", "S256");
  }
  return `/authorize?${query}`;
}

/** The consent page a signed-in browser sees, with its form's handle and the cookie binding it. */
export async function consentPage(door: OAuthDoor, options: AuthorizeOptions, cookie: string) {
  const response = await door.fetch(`${door.origin}${authorizePath(door, options)}`, {
    headers: { cookie },
    redirect: "manual",
  });
  const text = await response.text();
  const handle = /name="handle" value="([^"]+)"/.exec(text)?.[1] ?? null;
  return { response, text, handle, cookies: cookiesOf(response) };
}

/** The person answers the consent page: where the browser is sent. */
export function answerConsent(door: OAuthDoor, handle: string, cookies: string[], decision: "allow" | "deny") {
  return door.fetch(`${door.origin}/authorize`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookies.join("; ") },
    body: new URLSearchParams({ handle, decision }),
    redirect: "manual",
  });
}

/**
 * A code the person signed in with `apiKey` allowed `clientId` (for the door's /mcp unless `resource` says
 * otherwise), with the PKCE verifier it was asked with.
 */
export async function allowedCode(door: OAuthDoor, apiKey: string, clientId: string, resource?: string) {
  const { verifier, challenge } = await pkce();
  const cookie = await browserSignedIn(door, apiKey);
  const page = await consentPage(door, { clientId, challenge, ...(resource ? { resource } : {}) }, cookie);
  if (!page.handle) throw new Error(`no consent page: ${page.response.status}`);
  const answered = await answerConsent(door, page.handle, [cookie, ...page.cookies], "allow");
  const code = new URL(answered.headers.get("location") ?? "http://x").searchParams.get("code");
  if (!code) throw new Error(`no code: ${answered.status}`);
  return { code, verifier, cookie };
}

export function tokenRequest(door: OAuthDoor, body: Record<string, string>): Promise<Response> {
  return door.fetch(`${door.origin}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });
}

/** The code for tokens (for the door's /mcp unless `resource` says otherwise). */
export function exchangeCode(
  door: OAuthDoor,
  exchange: { clientId: string; code: string; verifier: string; resource?: string },
): Promise<Response> {
  return tokenRequest(door, {
    grant_type: "authorization_code",
    code: exchange.code,
    redirect_uri: REDIRECT_URI,
    client_id: exchange.clientId,
    code_verifier: exchange.verifier,
    resource: exchange.resource ?? resourceOf(door),
  });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  resource?: string;
}

/**
 * The whole flow for a new client, the person signed in with `apiKey`, for the door's /mcp unless `resource` says
 * otherwise: its tokens, and the browser's cookie.
 */
export async function authorizedClient(door: OAuthDoor, apiKey: string, name?: string, resource?: string) {
  const clientId = await registerClient(door, name);
  const { code, verifier, cookie } = await allowedCode(door, apiKey, clientId, resource);
  const response = await exchangeCode(door, { clientId, code, verifier, ...(resource ? { resource } : {}) });
  if (response.status !== 200) throw new Error(`the token endpoint answered ${response.status}`);
  return { clientId, tokens: (await response.json()) as Tokens, cookie };
}

/** tools/list on `origin`'s /mcp with `token`. */
export function listTools(door: OAuthDoor, token: string, origin = door.origin): Promise<Response> {
  return door.fetch(`${origin}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
}

// Signing in at the test provider from Node as a browser would (signInAt), and a whole code flow with PKCE for one
// client (codeFlowTokens), which the test-control endpoints offer to tests that run inside workerd.
import { createHash, randomBytes } from "node:crypto";
import { cookieJar } from "./cookie-jar.ts";
import { LOGIN_FORM_ID } from "./pages.ts";

/** More redirects than a sign-in takes (authorize, login, resume, consent, resume, callback). */
const MAX_HOPS = 20;

const LOGIN_FORM = new RegExp(`<form id="${LOGIN_FORM_ID}"[^>]*\\saction="([^"]*)"`);

/** The words a page of the provider shows: its alert, or else its text, shortened. */
function pageMessage(html: string): string {
  const alert = /<p role="alert"[^>]*>([\s\S]*?)<\/p>/.exec(html)?.[1];
  const text = (alert ?? html.replace(/<(style|script)[\s\S]*?<\/\1>/g, ""))
    .replace(/<[^>]+>/g, " ")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/\s+/g, " ")
    .trim();
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * Follows the authorization URL's redirects with a cookie jar, fills the login page as `user` (sub or email), and
 * returns the first redirect that leaves the provider's origin: the client's redirect_uri with `code` and `state`,
 * or with `error`. Throws with the page's message when the flow stops at a page instead (an unknown user, a
 * redirect_uri the client did not register, ...).
 */
export async function signInAt(authorizeUrl: string, user: string): Promise<string> {
  let url = new URL(authorizeUrl);
  const origin = url.origin;
  const jar = cookieJar();
  let form: URLSearchParams | undefined;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const headers: Record<string, string> = {};
    const cookie = jar.header(url);
    if (cookie) headers.cookie = cookie;
    const response = await fetch(url, {
      method: form ? "POST" : "GET",
      headers,
      redirect: "manual",
      ...(form ? { body: form } : {}),
    });
    jar.store(response);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== origin) return next.href;
      url = next;
      form = undefined;
      continue;
    }
    const page = await response.text();
    const action = LOGIN_FORM.exec(page)?.[1];
    if (response.ok && action !== undefined && !form) {
      url = new URL(action.replaceAll("&#38;", "&"), url);
      form = new URLSearchParams({ login: user });
      continue;
    }
    throw new Error(`signing in as ${user} stopped at ${url.pathname} (HTTP ${response.status}): ${pageMessage(page)}`);
  }
  throw new Error(`signing in as ${user} took more than ${MAX_HOPS} redirects`);
}

export interface CodeFlowRequest {
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  user: string;
  nonce: string;
  scope?: string;
}

export interface CodeFlowEndpoints {
  authorization: string;
  token: string;
}

/** What the flow ends with: the token endpoint's answer as it came, or the error the authorization returned. */
export interface CodeFlowResult {
  status: number;
  body: unknown;
}

/**
 * A whole code flow for a registered client: authorization with PKCE (S256), state and nonce, sign-in as `user`,
 * then the code exchanged at the token endpoint with client_secret_basic.
 */
export async function codeFlowTokens(endpoints: CodeFlowEndpoints, request: CodeFlowRequest): Promise<CodeFlowResult> {
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(16).toString("base64url");
  const authorize = new URL(endpoints.authorization);
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: request.client_id,
    redirect_uri: request.redirect_uri,
    scope: request.scope ?? "openid email profile groups",
    state,
    nonce: request.nonce,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  const callback = new URL(await signInAt(authorize.href, request.user));
  const error = callback.searchParams.get("error");
  if (error !== null) {
    return { status: 400, body: { error, error_description: callback.searchParams.get("error_description") ?? "" } };
  }
  const code = callback.searchParams.get("code");
  if (code === null || callback.searchParams.get("state") !== state) {
    return { status: 502, body: { error: "invalid_callback", error_description: `unexpected callback ${callback}` } };
  }
  const credentials = `${encodeURIComponent(request.client_id)}:${encodeURIComponent(request.client_secret)}`;
  const token = await fetch(endpoints.token, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(credentials).toString("base64")}` },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: request.redirect_uri,
      code_verifier: verifier,
    }),
  });
  return { status: token.status, body: await token.json() };
}

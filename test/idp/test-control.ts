// The test-control endpoints, for tests inside workerd that cannot import Node code:
//   POST /__test/sign-in  {"authorize_url","user"}  -> 200 {"callback_url"}
//   POST /__test/tokens   {"client_id","client_secret","redirect_uri","user","nonce"[,"scope"]}
//                         -> the token endpoint's status and JSON (id_token, access_token, ...)
//   POST /__test/jwt      {"claims"}  -> 200 {"jwt"}: the claims signed (RS256) with the key the provider publishes
//                         at its JWKS, with its issuer as iss, and iat now and exp an hour on unless the claims say
//                         otherwise: tokens the provider would never issue (several audiences, another shape)
// A failure answers 400 {"error","error_description"}.
import type { IncomingMessage, ServerResponse } from "node:http";
import { importJWK, type JWK, SignJWT } from "jose";
import type { Provider } from "oidc-provider";
import { z } from "zod";
import { readText, sendJson } from "./http.ts";
import { codeFlowTokens, signInAt } from "./sign-in.ts";

const SignInBody = z.object({ authorize_url: z.url(), user: z.string().min(1) });

const TokensBody = z.object({
  client_id: z.string().min(1),
  client_secret: z.string(),
  redirect_uri: z.url(),
  user: z.string().min(1),
  nonce: z.string().min(1),
  scope: z.string().optional(),
});

const JwtBody = z.object({ claims: z.record(z.string(), z.unknown()) });

/** What the test-control endpoints act on: the provider, and the private half of the key it publishes. */
export interface TestControlContext {
  provider: Provider;
  key: JWK & { kid: string };
}

function refuse(response: ServerResponse, error: string, description: string): void {
  sendJson(response, 400, { error, error_description: description });
}

/** The body parsed with `schema`, or the words saying why it does not fit. */
async function parseBody<T>(
  request: IncomingMessage,
  schema: z.ZodType<T>,
): Promise<{ data: T } | { problem: string }> {
  let json: unknown;
  try {
    json = JSON.parse(await readText(request));
  } catch (error) {
    return { problem: `the body is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { data: parsed.data } : { problem: z.prettifyError(parsed.error) };
}

async function signIn(_idp: TestControlContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await parseBody(request, SignInBody);
  if ("problem" in body) return refuse(response, "invalid_request", body.problem);
  const callbackUrl = await signInAt(body.data.authorize_url, body.data.user);
  sendJson(response, 200, { callback_url: callbackUrl });
}

async function tokens(idp: TestControlContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await parseBody(request, TokensBody);
  if ("problem" in body) return refuse(response, "invalid_request", body.problem);
  const { provider } = idp;
  const endpoints = { authorization: provider.urlFor("authorization"), token: provider.urlFor("token") };
  const result = await codeFlowTokens(endpoints, body.data);
  sendJson(response, result.status, result.body);
}

async function jwt(idp: TestControlContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await parseBody(request, JwtBody);
  if ("problem" in body) return refuse(response, "invalid_request", body.problem);
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: idp.provider.issuer, iat: now, exp: now + 3600, ...body.data.claims };
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: idp.key.kid })
    .sign(await importJWK(idp.key, "RS256"));
  sendJson(response, 200, { jwt: token });
}

const ROUTES: Record<string, typeof signIn> = {
  "/__test/sign-in": signIn,
  "/__test/tokens": tokens,
  "/__test/jwt": jwt,
};

export async function serveTestControl(
  idp: TestControlContext,
  path: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const route = ROUTES[path];
  if (!route) return sendJson(response, 404, { error: "not_found", error_description: `no test control at ${path}` });
  if (request.method !== "POST") return sendJson(response, 405, { error: "method_not_allowed" });
  try {
    await route(idp, request, response);
  } catch (error) {
    refuse(response, "sign_in_failed", error instanceof Error ? error.message : String(error));
  }
}

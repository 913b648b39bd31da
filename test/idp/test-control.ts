// The test-control endpoints, for tests inside workerd that cannot import Node code:
//   POST /__test/sign-in  {"authorize_url","user"}  -> 200 {"callback_url"}
//   POST /__test/tokens   {"client_id","client_secret","redirect_uri","user","nonce"[,"scope"]}
//                         -> the token endpoint's status and JSON (id_token, access_token, ...)
// A failure answers 400 {"error","error_description"}.
import type { IncomingMessage, ServerResponse } from "node:http";
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

async function signIn(_provider: Provider, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await parseBody(request, SignInBody);
  if ("problem" in body) return refuse(response, "invalid_request", body.problem);
  const callbackUrl = await signInAt(body.data.authorize_url, body.data.user);
  sendJson(response, 200, { callback_url: callbackUrl });
}

async function tokens(provider: Provider, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await parseBody(request, TokensBody);
  if ("problem" in body) return refuse(response, "invalid_request", body.problem);
  const endpoints = { authorization: provider.urlFor("authorization"), token: provider.urlFor("token") };
  const result = await codeFlowTokens(endpoints, body.data);
  sendJson(response, result.status, result.body);
}

const ROUTES: Record<string, typeof signIn> = { "/__test/sign-in": signIn, "/__test/tokens": tokens };

export async function serveTestControl(
  provider: Provider,
  path: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const route = ROUTES[path];
  if (!route) return sendJson(response, 404, { error: "not_found", error_description: `no test control at ${path}` });
  if (request.method !== "POST") return sendJson(response, 405, { error: "method_not_allowed" });
  try {
    await route(provider, request, response);
  } catch (error) {
    refuse(response, "sign_in_failed", error instanceof Error ? error.message : String(error));
  }
}

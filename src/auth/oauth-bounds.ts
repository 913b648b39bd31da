// The bounds of what the authorization server reads (src/auth/oauth.ts checks them before it reads a request, the
// authorize step before it parses one). Its records are in KV under keys made of a client's id (`client:<id>`) and of
// the user and grant ids a code or token names (`grant:<user>:<grant>`, `token:<user>:<grant>:<sha-256>`), and a KV
// key holds at most 512 bytes: a longer id names nothing the server could have issued or stored, so it is refused
// here in OAuth's words instead of failing in KV. The bodies of the token, revocation and registration endpoints are
// bounded too.
import { decodeJwt } from "jose";
import { oauthError } from "./oauth-error";

/** The longest client id taken, in UTF-8 bytes (`client:<id>` is a KV key). */
export const MAX_CLIENT_ID_BYTES = 500;
/** The longest user and grant ids a code or token may name together (`token:<user>:<grant>:<sha-256>` is a KV key). */
const MAX_TOKEN_IDS_BYTES = 400;
/** The largest body the token, revocation and registration endpoints read. */
export const MAX_OAUTH_BODY_BYTES = 64 * 1024;

const encoder = new TextEncoder();

function utf8Bytes(text: string): number {
  return encoder.encode(text).byteLength;
}

/** Whether `clientId` is longer than any client id this server keeps. */
export function clientIdTooLong(clientId: string): boolean {
  return utf8Bytes(clientId) > MAX_CLIENT_ID_BYTES;
}

/**
 * Whether `credential` (a code, an access or a refresh token) is shaped as this server's (`user:grant:secret`) but
 * names a user and grant longer than any it issues. Any other shape is the server's to refuse.
 */
export function namesTooLong(credential: string): boolean {
  const [user, grant, ...rest] = credential.split(":");
  if (user === undefined || grant === undefined || rest.length !== 1) return false;
  return utf8Bytes(user) + utf8Bytes(grant) > MAX_TOKEN_IDS_BYTES;
}

/** The body of `request` (a clone of it is read), or null when it is larger than `maxBytes`. */
export async function boundedBody(request: Request, maxBytes: number): Promise<string | null> {
  if (Number(request.headers.get("content-length") ?? "0") > maxBytes) return null;
  const reader = request.clone().body?.getReader();
  if (!reader) return "";
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** Whether the token endpoint's parser reads `contentType` as a form (the only body it takes). */
export function isFormContentType(contentType: string | null): boolean {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() === "application/x-www-form-urlencoded";
}

/** The client id of a Basic Authorization header, as the token endpoint decodes it; undefined when there is none. */
function basicClientId(authorization: string | null): string | undefined {
  const credentials = /^basic[ \t]+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (!credentials) return undefined;
  try {
    const decoded = atob(credentials);
    const separator = decoded.indexOf(":");
    if (separator === -1) return undefined;
    return decodeURIComponent(decoded.slice(0, separator).replace(/\+/g, " "));
  } catch {
    // Not Base64, or not percent-encoding: the token endpoint refuses it as malformed.
    return undefined;
  }
}

/** The issuer of a client assertion (the client id when none is sent); undefined when it has none to read. */
function assertionIssuer(form: URLSearchParams): string | undefined {
  const assertion = form.get("client_assertion");
  if (!assertion || form.has("client_id")) return undefined;
  try {
    const { iss } = decodeJwt(assertion);
    return typeof iss === "string" ? iss : undefined;
  } catch {
    // Not a JWT: the token endpoint refuses it.
    return undefined;
  }
}

/**
 * Why the token endpoint (or /oauth/revoke) refuses `form` before the authorization server reads it, or null: a
 * client id (in the form, a Basic header or a client assertion) or a code or token naming ids longer than any this
 * server keeps.
 */
export function tokenRequestRefusal(form: URLSearchParams, authorization: string | null): Response | null {
  const clientIds = [...form.getAll("client_id"), basicClientId(authorization), assertionIssuer(form)];
  if (clientIds.some((id) => id !== undefined && clientIdTooLong(id))) {
    return oauthError(
      401,
      "invalid_client",
      `Client not found: client_id is longer than ${MAX_CLIENT_ID_BYTES} bytes, and no client of this server has such an id.`,
    );
  }
  for (const name of ["code", "refresh_token", "token"] as const) {
    if (!form.getAll(name).some(namesTooLong)) continue;
    const description = `${name} is not one this server issued (it names ids longer than any it issues).`;
    return name === "token"
      ? oauthError(400, "invalid_request", description)
      : oauthError(400, "invalid_grant", description);
  }
  return null;
}

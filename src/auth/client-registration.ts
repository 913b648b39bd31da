// The bounds of dynamic client registration (RFC 7591), checked in the authorization server's registration callback
// (src/auth/oauth.ts) before a client is stored: what the server keeps of a client, and what the consent page shows
// of it, stays small. A refusal names the field: `invalid_redirect_uri` for redirect_uris, `invalid_client_metadata`
// for the others. The body as a whole is bounded before the server reads it (MAX_OAUTH_BODY_BYTES).
import { z } from "zod";
import { quoted } from "../quote";

export const MAX_CLIENT_NAME_CHARS = 200;
export const MAX_REDIRECT_URIS = 10;
export const MAX_URI_CHARS = 2000;
const MAX_CONTACTS = 10;
const MAX_CONTACT_CHARS = 320;

const longerThan = (max: number) => `is longer than ${max} characters`;
const uri = z.string().max(MAX_URI_CHARS, longerThan(MAX_URI_CHARS));

/** The bounded fields (each localized variant, `client_name#fr`, is bounded as its field). */
const BOUNDS: Record<string, z.ZodType> = {
  client_name: z.string().max(MAX_CLIENT_NAME_CHARS, longerThan(MAX_CLIENT_NAME_CHARS)),
  redirect_uris: z.array(uri).max(MAX_REDIRECT_URIS, `has more than ${MAX_REDIRECT_URIS} URIs`),
  client_uri: uri,
  logo_uri: uri,
  policy_uri: uri,
  tos_uri: uri,
  jwks_uri: uri,
  contacts: z
    .array(z.string().max(MAX_CONTACT_CHARS, longerThan(MAX_CONTACT_CHARS)))
    .max(MAX_CONTACTS, `has more than ${MAX_CONTACTS} entries`),
};

/** Why a registration of `metadata` is refused, or undefined: the first field over its bound. */
export function registrationRefusal(
  metadata: Record<string, unknown>,
): { code: string; description: string } | undefined {
  for (const [key, value] of Object.entries(metadata)) {
    const field = key.split("#")[0] ?? key;
    const checked = BOUNDS[field]?.safeParse(value);
    const issue = checked?.success === false ? checked.error.issues[0] : undefined;
    if (!issue) continue;
    const name = field === key ? key : quoted(key, 40);
    const where = issue.path.map((step) => `[${String(step)}]`).join("");
    return {
      code: field === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata",
      description: `${name}${where} ${issue.message}.`,
    };
  }
  return undefined;
}

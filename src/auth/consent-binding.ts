// Who a consent page was shown to (src/routes/authorize.ts). The authorization server binds a consent handle to the
// browser by a cookie; aptix binds it to the person too: when the page is shown, the person it names is kept in
// OAUTH_KV under the SHA-256 of the handle, for as long as the handle lives (ten minutes), and an answer carried by
// anyone else's browser session is refused before the handle is opened, so nothing is granted or consumed.
import { z } from "zod";
import { sha256Hex } from "../secret-text";

/** How long a consent handle lives (the authorization server's transaction: ten minutes). */
const CONSENT_TTL_S = 600;

const ShownTo = z.object({ org: z.string(), user: z.string() });
export type ShownTo = z.infer<typeof ShownTo>;

const keyOf = async (handle: string) => `aptix:consent-shown-to:${await sha256Hex(handle)}`;

/** Records that the consent page of `handle` was shown to `person`. */
export async function bindConsent(kv: KVNamespace, handle: string, person: ShownTo): Promise<void> {
  const value: ShownTo = { org: person.org, user: person.user };
  await kv.put(await keyOf(handle), JSON.stringify(value), { expirationTtl: CONSENT_TTL_S });
}

/** Whether the consent page of `handle` was shown to `person` (false when it was shown to someone else, or expired). */
export async function consentShownTo(kv: KVNamespace, handle: string, person: ShownTo): Promise<boolean> {
  const stored = ShownTo.safeParse(await kv.get(await keyOf(handle), "json"));
  return stored.success && stored.data.org === person.org && stored.data.user === person.user;
}

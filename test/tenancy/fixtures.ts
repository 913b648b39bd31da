// Helpers for the tenancy tests: calls made with whichever key a test names, an org's own provider key and route to
// the second scripted upstream (whose key is UPSTREAM_B_KEY's value), and the modes a key's org sees.
import { env, exports } from "cloudflare:workers";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, type ErrorBody } from "../fixtures/sessions";
import { uniqueName } from "../mcp/fixtures";
import { TEST_UPSTREAM_B_API_KEY } from "../upstream/global-setup";

export const OPERATOR = TEST_KEYS.operator.key;
export const ADMIN_A = TEST_KEYS.admin.key;
export const MEMBER_A = TEST_KEYS.chat.key;
export const OTHER_MEMBER_A = TEST_KEYS.otherMember.key;
export const ADMIN_B = TEST_KEYS.otherOrg.key;

/** The status and error code of a refusal (or the status alone of an answer). */
export async function outcome(
  method: string,
  path: string,
  body: unknown,
  key: string,
): Promise<{ status: number; code: string | null; param: string | null }> {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method,
    headers: { ...authHeaders(key), "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const error = text ? (JSON.parse(text) as Partial<ErrorBody>).error : undefined;
  return { status: response.status, code: error?.code ?? null, param: error?.param ?? null };
}

/** Stores a provider key in the org of `adminKey`; the value the second scripted upstream takes by default. */
export async function storeSecret(adminKey: string, name: string, value = TEST_UPSTREAM_B_API_KEY): Promise<void> {
  const { status, json } = await call("PUT", `/admin/secrets/${name}`, { value }, adminKey);
  if (status !== 201 && status !== 200) throw new Error(`secret not stored (${status}): ${JSON.stringify(json)}`);
}

/** An org's own route to the second scripted upstream, its key one of the org's secrets; returns its name. */
export async function orgRouteToUpstreamB(adminKey: string, name = uniqueName("own")): Promise<string> {
  const secret = `KEY_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
  await storeSecret(adminKey, secret);
  const { status, json } = await call(
    "PUT",
    `/admin/model-routes/${name}?owner=org`,
    {
      provider: "openai_compatible",
      model: "org-model",
      baseUrl: `${env.TEST_UPSTREAM_B_URL}/v1`,
      apiKeySecret: secret,
    },
    adminKey,
  );
  if (status !== 201 && status !== 200) throw new Error(`route not written (${status}): ${JSON.stringify(json)}`);
  return name;
}

/** A mode body, on `route`. */
export function modeBody(route = "default", overrides: Record<string, unknown> = {}) {
  return {
    displayName: "Org mode",
    description: "A mode of one organization.",
    systemPrompt: "You answer for this organization only.",
    tools: ["agent_hello_world"],
    modelRoute: route,
    ...overrides,
  };
}

/** The keys of the modes `key`'s org sees (GET /modes). */
export async function modesSeenBy(key: string): Promise<string[]> {
  const { json } = await call("GET", "/modes", undefined, key);
  return (json as { modes: { key: string }[] }).modes.map((m) => m.key);
}

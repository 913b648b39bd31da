// A benchmark's JSON request to aptix: as seeds/local.sql's dev-key (an operator of dev-org) unless another key is
// given; the answer's JSON, or an error naming the request when it is refused.

/** seeds/local.sql's key, which the local database holds. */
export const DEV_KEY = "dev-key";

export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  key: string = DEV_KEY,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

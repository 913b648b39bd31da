// Where an org's configuration may send its people's conversations and its keys: an https: upstream (a model route's
// base URL, an MCP server, a webhook endpoint), or http: to loopback where the deployment allows it for development
// (MCP_ALLOW_HTTP_LOOPBACK, WEBHOOK_ALLOW_HTTP_LOOPBACK, as `npm start` sets them). The runtime's
// global_fetch_strictly_public keeps fetches off private networks besides; a webhook endpoint's URL is also refused
// when it names a private address itself (privateHostProblem), so the refusal comes at creation, named.
import { isLoopbackHost } from "../settings";

/** What is wrong with `url` as an upstream `what` names ("an MCP server"), or null. */
export function upstreamUrlProblem(
  url: string,
  allowHttpLoopback: boolean,
  what = "an organization's upstream",
  setting = "MCP_ALLOW_HTTP_LOOPBACK",
): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL.";
  }
  if (parsed.protocol === "https:") return null;
  if (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname)) {
    return allowHttpLoopback ? null : `http: is allowed only to loopback in development (${setting}); use https:.`;
  }
  return `${what} must be https: (or http: to loopback in development).`;
}

/**
 * Why `url` carries a credential it must not (a user name or password), or null. A URL is shown to admins, written to
 * the audit log and quoted in errors: a key goes in a secret the route or server names (`instead` says where).
 */
export function credentialInUrlProblem(url: string, instead: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (!parsed.username && !parsed.password) return null;
  return `must not carry a user name or password: ${instead}.`;
}

/** Where a key of an upstream goes instead of its URL: the secret its `field` names. */
export const namedSecret = (field: string) => `store the key as a secret and name it in '${field}'`;

/** Host names that only mean something inside a network: never a public service's. */
const PRIVATE_NAME = /(^|\.)(localhost|internal|local|lan|home\.arpa|intranet|corp|private)$/;

/** IPv4 ranges that are not the public internet (RFC 6890): [first octets as a number, prefix length]. */
const PRIVATE_V4: readonly [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
];

const v4Number = (text: string): number | null => {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
};

function privateV4(address: string): boolean {
  const n = v4Number(address);
  if (n === null) return false;
  return PRIVATE_V4.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    const start = v4Number(base) ?? 0;
    return n >= start && n < start + size;
  });
}

/** An IPv6 literal (as URL writes it, without brackets) that is loopback, unspecified, local or mapped private IPv4. */
function privateV6(address: string): boolean {
  const a = address.toLowerCase();
  if (a === "::" || a === "::1") return true;
  // Unique local (fc00::/7), link-local (fe80::/10), multicast (ff00::/8).
  if (/^f[cd][0-9a-f]{0,2}:/.test(a) || /^fe[89ab][0-9a-f]?:/.test(a) || /^ff[0-9a-f]{0,2}:/.test(a)) return true;
  // IPv4-mapped (::ffff:a.b.c.d, which URL writes as ::ffff:7f00:1) and NAT64 (64:ff9b::/96): the IPv4 inside decides.
  const mapped = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (mapped) {
    const high = Number.parseInt(mapped[1] ?? "0", 16);
    const low = Number.parseInt(mapped[2] ?? "0", 16);
    return privateV4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  return /^(?:::ffff:|64:ff9b::)\d/.test(a) && privateV4(a.replace(/^.*:/, ""));
}

/**
 * Why `hostname` (as `new URL(...).hostname` gives it: IPv4 normalized, IPv6 in brackets) is not a public host, or
 * null: a private, loopback, link-local or unspecified address, or a name only a private network resolves
 * (`localhost`, `.internal`, `.local`, a name without a dot).
 */
export function privateHostProblem(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[")) {
    return privateV6(host.slice(1, -1)) ? `${hostname} is a private, loopback or link-local IPv6 address.` : null;
  }
  if (v4Number(host) !== null) {
    return privateV4(host) ? `${hostname} is a private, loopback or link-local IPv4 address.` : null;
  }
  if (!host.includes(".") || PRIVATE_NAME.test(host)) {
    return `${hostname} is a name only a private network resolves; use the endpoint's public host name.`;
  }
  return null;
}

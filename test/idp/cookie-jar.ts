// A cookie jar for one sign-in over fetch: keeps what one origin sets and sends back the cookies whose path fits.
// Enough for oidc-provider's cookies (host-only, path-scoped, deleted by an expiry in the past), not a general jar.

interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

export interface CookieJar {
  /** Takes the response's Set-Cookie lines. */
  store(response: Response): void;
  /** The Cookie header for a request to `url`, or undefined when no cookie fits. */
  header(url: URL): string | undefined;
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath.charAt(cookiePath.length) === "/";
}

function isExpired(attributes: Map<string, string>): boolean {
  const maxAge = attributes.get("max-age");
  if (maxAge !== undefined) return Number(maxAge) <= 0;
  const expires = attributes.get("expires");
  return expires !== undefined && Date.parse(expires) <= Date.now();
}

export function cookieJar(): CookieJar {
  const cookies = new Map<string, StoredCookie>();
  return {
    store(response) {
      for (const line of response.headers.getSetCookie()) {
        const [pair = "", ...rest] = line.split(";");
        const equals = pair.indexOf("=");
        if (equals <= 0) continue;
        const attributes = new Map(
          rest.map((part) => {
            const at = part.indexOf("=");
            return at === -1
              ? [part.trim().toLowerCase(), ""]
              : [part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim()];
          }),
        );
        const cookie = {
          name: pair.slice(0, equals).trim(),
          value: pair.slice(equals + 1).trim(),
          path: attributes.get("path") || "/",
        };
        const key = `${cookie.name}\n${cookie.path}`;
        if (isExpired(attributes)) cookies.delete(key);
        else cookies.set(key, cookie);
      }
    },
    header(url) {
      const fitting = [...cookies.values()].filter((cookie) => pathMatches(url.pathname, cookie.path));
      return fitting.length ? fitting.map((cookie) => `${cookie.name}=${cookie.value}`).join("; ") : undefined;
    },
  };
}

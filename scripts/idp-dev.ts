// npm run idp:dev: a local OpenID provider to sign in to `npm run dev` / `npm start` with (test/idp/oidc-idp.ts),
// on http://localhost:9400 (IDP_PORT=... for another port), with the test users alice (an admin) and bob, and
// prints the lines of .dev.vars that point the Worker at it. It sends people back to the Worker at APTIX_URL
// (default http://localhost:8787, as every example takes it), by that host name or its loopback twin. Ctrl-C stops it; its sessions live in memory only.
import { IDP_USERS, startIdp } from "../test/idp/oidc-idp.ts";

const port = Number(process.env.IDP_PORT ?? 9400);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`IDP_PORT must be a port number, not ${process.env.IDP_PORT}`);
  process.exit(1);
}

/** The Worker's sign-in callback at `base`, by its host name and by its loopback twin (localhost, 127.0.0.1). */
function callbackUrls(base: string): string[] {
  const url = new URL("/auth/callback", base);
  const twin = new URL(url);
  if (url.hostname === "localhost") twin.hostname = "127.0.0.1";
  else if (url.hostname === "127.0.0.1") twin.hostname = "localhost";
  return [...new Set([url.href, twin.href])];
}

const client = {
  client_id: "aptix-local",
  client_secret: "aptix-local-secret",
  redirect_uris: callbackUrls(process.env.APTIX_URL || "http://localhost:8787"),
};

let idp: Awaited<ReturnType<typeof startIdp>>;
try {
  idp = await startIdp({ port, hostname: "localhost", clients: [client], testControl: false });
} catch (error) {
  const inUse = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
  console.error(inUse ? `Port ${port} is taken: stop what serves it, or set IDP_PORT.` : error);
  process.exit(1);
}

console.log(`Test OpenID provider at ${idp.issuer}`);
console.log(`Users (no password): ${IDP_USERS.map((u) => `${u.sub} (${u.groups.join(", ")})`).join("; ")}`);
console.log("\nPut this in .dev.vars, then (re)start npm start:\n");
console.log(
  [
    `OIDC_ISSUER=${idp.issuer}`,
    `OIDC_CLIENT_ID=${client.client_id}`,
    `OIDC_CLIENT_SECRET=${client.client_secret}`,
    "OIDC_ORG=acme",
    "OIDC_ADMIN_GROUPS=aptix-admins",
    // This provider gives the groups claim with a scope of its own.
    "OIDC_SCOPES=openid email profile groups",
  ].join("\n"),
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void idp.close().then(() => process.exit(0));
  });
}

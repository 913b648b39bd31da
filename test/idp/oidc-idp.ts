// A real OpenID provider (oidc-provider) on a loopback port over http, for tests and `npm run idp:dev`: the code
// flow only, PKCE (S256) required, client_secret_basic or client_secret_post, signing keys of its own, a login page
// a person or a browser test fills (/interaction/:uid), and, for tests inside workerd, test-control endpoints. Its
// claims behave as shipped: an ID token of the code flow carries `sub` and the protocol's claims, and the claims of
// the scopes granted (email, name, groups, org) are read from its UserInfo endpoint with the access token.
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { JWK } from "jose";
import Provider, { interactionPolicy, type ProviderConfiguration } from "oidc-provider";
import { createMemoryAdapter } from "oidc-provider/lib/adapters/memory_adapter.js";
import { accountOf, IDP_USERS, type IdpClient, type IdpUser, SCOPE_CLAIMS } from "./accounts.ts";
import { sendHtml } from "./http.ts";
import { serveInteraction } from "./interactions.ts";
import { errorPage } from "./pages.ts";
import { serveTestControl } from "./test-control.ts";

export { IDP_USERS, type IdpClient, type IdpUser } from "./accounts.ts";
export { signInAt } from "./sign-in.ts";

export interface IdpOptions {
  /** 0 (the default) takes any free port. */
  port?: number;
  clients: IdpClient[];
  users?: IdpUser[];
  /** How long an ID token lasts; an hour by default. */
  idTokenTtlSeconds?: number;
  /**
   * Where the signing keys are published; /jwks by default. Cloudflare Access publishes a team's at
   * /cdn-cgi/access/certs and signs assertions with them (RS256, iss the team), so a provider with that path, its
   * POST /__test/jwt signing claims of Access's shape, stands in for a team.
   */
  jwksPath?: string;
  /** How long an authorization code lasts; a minute by default. */
  authorizationCodeTtlSeconds?: number;
  /** Serve POST /__test/sign-in, /__test/tokens and /__test/jwt (test-control.ts); true by default. */
  testControl?: boolean;
  /**
   * The issuer's host: `127.0.0.1` (the default) listens there; `localhost` listens on 127.0.0.1 and on ::1 (when
   * the machine has it), so a browser and workerd reach it whichever address they resolve localhost to.
   */
  hostname?: "127.0.0.1" | "localhost";
}

export interface RunningIdp {
  /** `http://<hostname>:<port>`, no trailing slash. */
  issuer: string;
  close(): Promise<void>;
}

/** A fresh RS256 signing key, so that two providers never share keys (oidc-provider's dev keys are one set). */
function signingKey(): JWK & { kid: string } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" };
}

/** The base policy, with a login asked on every authorization request: a browser can switch between users. */
function interactions(): NonNullable<ProviderConfiguration["interactions"]> {
  const policy = interactionPolicy.base();
  policy
    .get("login")
    ?.checks.add(
      new interactionPolicy.Check(
        "sign_in_each_time",
        "every authorization request signs in anew",
        (ctx) => ctx.oidc.result?.login === undefined,
      ),
    );
  return { policy, url: (_ctx, interaction) => `/interaction/${interaction.uid}` };
}

function configuration(options: IdpOptions, users: IdpUser[], key: JWK): ProviderConfiguration {
  return {
    // oidc-provider's own in-memory adapter (the default), with a store for this provider alone and without the
    // warning it prints when left to pick it.
    adapter: createMemoryAdapter(15),
    clients: options.clients.map((client) => ({
      ...client,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    })),
    clientAuthMethods: ["client_secret_basic", "client_secret_post"],
    clientBasedCORS: () => false,
    scopes: ["openid"],
    claims: SCOPE_CLAIMS,
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    features: { devInteractions: { enabled: false } },
    findAccount: async (_ctx, sub) => {
      const user = users.find((u) => u.sub === sub);
      return user && accountOf(user);
    },
    interactions: interactions(),
    jwks: { keys: [key] },
    pkce: { required: () => true },
    renderError: (ctx, out) => {
      ctx.type = "html";
      ctx.body = errorPage("Sign-in failed", `${out.error}: ${out.error_description ?? ""}`);
    },
    responseTypes: ["code"],
    ...(options.jwksPath ? { routes: { jwks: options.jwksPath } } : {}),
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: options.authorizationCodeTtlSeconds ?? 60,
      Grant: 3600,
      IdToken: options.idTokenTtlSeconds ?? 3600,
      Interaction: 600,
      Session: 3600,
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Starts a provider with its own keys and in-memory state. */
export async function startIdp(options: IdpOptions): Promise<RunningIdp> {
  const hostname = options.hostname ?? "127.0.0.1";
  const servers = [createServer()];
  const port = await listen(servers[0] as Server, options.port ?? 0, "127.0.0.1");
  if (hostname === "localhost") {
    const v6 = createServer();
    try {
      await listen(v6, port, "::1");
      servers.push(v6);
    } catch (error) {
      // No IPv6 loopback on this machine: localhost is 127.0.0.1 alone. Anything else (::1's port taken) is fatal.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EADDRNOTAVAIL" && code !== "EAFNOSUPPORT") {
        await stop(servers[0] as Server);
        throw error;
      }
    }
  }
  const issuer = `http://${hostname}:${port}`;
  const users = options.users ?? IDP_USERS;
  const key = signingKey();
  const provider = new Provider(issuer, configuration(options, users, key));
  provider.on("server_error", (_ctx, error) => console.error("test IdP:", error));
  const callback = provider.callback();
  const testControl = options.testControl ?? true;

  const route = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? "/", issuer).pathname;
    if (testControl && path.startsWith("/__test/")) return serveTestControl({ provider, key }, path, request, response);
    if (/^\/interaction\/[\w-]+$/.test(path)) return serveInteraction({ provider, users }, request, response);
    return callback(request, response);
  };
  for (const server of servers) {
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      route(request, response).catch((error: unknown) => {
        console.error("test IdP:", error);
        if (!response.headersSent) sendHtml(response, 500, errorPage("Server error", String(error)));
        else response.destroy();
      });
    });
  }
  return { issuer, close: async () => void (await Promise.all(servers.map(stop))) };
}

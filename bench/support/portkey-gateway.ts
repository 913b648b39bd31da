// Portkey's AI gateway (github.com/Portkey-AI/gateway) as bench:passthrough's optional peer: its own checkout, named by
// PORTKEY_GATEWAY_DIR, run with its own wrangler.toml and src/index.ts under our `wrangler dev` (offline, as our
// Workers run), and the headers that route a request through it to an OpenAI-compatible custom host. Nothing of
// Portkey's code is in this repository: the checkout is the user's (scripts/portkey-checkout.mjs makes one).
import { access, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type LocalWorker, startLocalWorker } from "./local-worker.ts";

/** The environment variable naming the checkout; without it the bench runs without Portkey. */
export const PORTKEY_GATEWAY_DIR_VAR = "PORTKEY_GATEWAY_DIR";

/** How to add Portkey to the bench, printed when the variable is not set. */
export const PORTKEY_HOW_TO = `Portkey's gateway not included: set ${PORTKEY_GATEWAY_DIR_VAR} to a checkout of github.com/Portkey-AI/gateway with its dependencies installed (node scripts/portkey-checkout.mjs <repository> <dir>; docs/performance.md#beside-portkey).`;

/** A checkout the bench can run. */
export interface PortkeyCheckout {
  /** Its absolute path. */
  root: string;
  /** Its package.json version, for the report. */
  version: string;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * The checkout `dir`, once it is one the bench can run: the gateway's package with its wrangler config, its Worker
 * entry and its dependencies installed; otherwise an error that says what is missing (before any worker starts).
 */
export async function portkeyCheckout(dir: string): Promise<PortkeyCheckout> {
  const root = resolve(dir);
  const manifest = await readFile(join(root, "package.json"), "utf8").then(
    (text) => JSON.parse(text) as { name?: string; version?: string },
    () => null,
  );
  if (manifest?.name !== "@portkey-ai/gateway") {
    throw new Error(`${PORTKEY_GATEWAY_DIR_VAR}=${dir} is not a checkout of github.com/Portkey-AI/gateway.`);
  }
  for (const needed of ["wrangler.toml", "src/index.ts"]) {
    if (!(await exists(join(root, needed)))) throw new Error(`${root} has no ${needed}.`);
  }
  if (!(await exists(join(root, "node_modules", "hono")))) {
    throw new Error(`${root} has no dependencies installed: run NODE_ENV=production npm ci there.`);
  }
  return { root, version: manifest.version ?? "unknown version" };
}

/**
 * Starts the gateway of `checkout` under `wrangler dev` as `startLocalWorker` starts ours (the same wrangler,
 * loopback, a free port, no database), ready once `GET /` answers. TRUSTED_CUSTOM_HOSTS lets it forward to the
 * scripted upstream on loopback (127.0.0.1 is in its default list; set anyway, not to rest on that default).
 */
export function startPortkeyGateway(checkout: PortkeyCheckout): Promise<LocalWorker> {
  return startLocalWorker({
    config: join(checkout.root, "wrangler.toml"),
    vars: { TRUSTED_CUSTOM_HOSTS: "127.0.0.1" },
    database: false,
    readyPath: "/",
  });
}

/**
 * The headers of a chat completion through the gateway to an OpenAI-compatible server at `baseUrl` (…/v1): its
 * `openai` provider with a custom host, the upstream's key as the bearer token (the gateway sends it on).
 */
export function portkeyHeaders(baseUrl: string, upstreamKey: string): Record<string, string> {
  return {
    authorization: `Bearer ${upstreamKey}`,
    "content-type": "application/json",
    "x-portkey-provider": "openai",
    "x-portkey-custom-host": baseUrl,
  };
}

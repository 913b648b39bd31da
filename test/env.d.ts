// Test-only bindings added by vitest.config.ts.
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** The scripted upstream's own URL (its control endpoints live beside /v1). */
    TEST_UPSTREAM_URL: string;
    /** A second scripted upstream (its key is UPSTREAM_B_KEY), for model routes; "" in `offline`. */
    TEST_UPSTREAM_B_URL: string;
    /** The scripted Anthropic Messages API upstream (test/upstream/scripted-anthropic.ts), "" in `offline`. */
    TEST_ANTHROPIC_URL: string;
    /** Its key; unset in `offline`. */
    TEST_ANTHROPIC_API_KEY?: string;
    UPSTREAM_A_KEY?: string;
    UPSTREAM_B_KEY?: string;
    /** The MCP reference server (server-everything) in Streamable HTTP mode, started by test/mcp/. */
    TEST_MCP_EVERYTHING_URL: string;
    /** Starts and stops more reference servers, and proxies the shared one behind a token (test/mcp/). */
    TEST_MCP_CONTROL_URL: string;
    /** The token the control server's /authed/mcp proxy wants; a registered server's authSecret names it. */
    MCP_TEST_TOKEN: string;
    /** The key that wraps orgs' provider keys (test/fixtures/secrets-key.ts); a rotation's previous one, unset. */
    SECRETS_KEY: string;
    SECRETS_KEY_PREVIOUS?: string;
    /** A real OpenID provider (oidc-provider, test/idp/) the sign-in tests sign in at, "" in `offline`. */
    TEST_IDP_ISSUER: string;
    /** Another one, with keys of its own. */
    TEST_IDP_OTHER_ISSUER: string;
    /** One whose authorization codes last a second. */
    TEST_IDP_SHORT_CODE_ISSUER: string;
    /** A provider in a Cloudflare Access team's place (keys at /cdn-cgi/access/certs). */
    TEST_ACCESS_TEAM: string;
    /** The OTLP/HTTP receiver (test/observability/) the `traced` project exports to, "" in the other projects. */
    TEST_OTLP_URL: string;
    /** Its control server: what it received, for test/observability/spans.ts; "" outside `traced`. */
    TEST_OTLP_CONTROL_URL: string;
    /** A loopback URL on which nothing listens (a collector that is down); "" outside `traced`. */
    TEST_OTLP_DOWN_URL: string;
    /** The webhook receiver (test/webhooks/receiver.ts) in the `workers` project, "" in the others. */
    TEST_WEBHOOK_RECEIVER_URL: string;
    /** The scripted upstream's /v1 in the `workers` project, "" in `offline` (vitest.config.ts sets both). */
    LLM_BASE_URL: string;
  }
}

/** A file's text, imported with Vite's `?raw` suffix (the local seed, in tests). */
declare module "*?raw" {
  const text: string;
  export default text;
}

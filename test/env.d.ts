// Test-only bindings added by vitest.config.ts.
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** The scripted upstream's own URL (its control endpoints live beside /v1). */
    TEST_UPSTREAM_URL: string;
    /** The scripted upstream's /v1 in the `workers` project, "" in `offline` (vitest.config.ts sets both). */
    LLM_BASE_URL: string;
  }
}

/** A file's text, imported with Vite's `?raw` suffix (the local seed, in tests). */
declare module "*?raw" {
  const text: string;
  export default text;
}

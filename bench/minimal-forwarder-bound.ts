// The benchmark's second baseline: the minimal forwarder (bench/minimal-forwarder.ts) with the bindings ours
// has, so it pays the same local simulators under `wrangler dev`: the static assets in front (the assets
// router runs before every request) and the rate limiting binding, whose limit() it calls once a request as
// our passthrough does. Still no auth, no validation, no usage.

/** Cloudflare's rate limiting binding, as much of it as the forwarder uses (Node's types do not have it). */
interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

interface BoundEnv {
  LLM_BASE_URL: string;
  LLM_API_KEY: string;
  LIMITER: RateLimiter;
}

export default {
  async fetch(request: Request, env: BoundEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return new Response("ok");
    if (!(await env.LIMITER.limit({ key: "bench" })).success) return new Response("rate limited", { status: 429 });
    return fetch(`${env.LLM_BASE_URL}${url.pathname.replace(/^\/v1/, "")}`, {
      method: request.method,
      headers: { authorization: `Bearer ${env.LLM_API_KEY}`, "content-type": "application/json" },
      body: request.body,
    });
  },
};

// The benchmark's baseline: a Worker that only forwards to the upstream with the server's key and
// returns its answer as it is (no auth, no validation, no rate limit, no usage), to measure ours against.

interface MinimalEnv {
  LLM_BASE_URL: string;
  LLM_API_KEY: string;
}

export default {
  async fetch(request: Request, env: MinimalEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return new Response("ok");
    return fetch(`${env.LLM_BASE_URL}${url.pathname.replace(/^\/v1/, "")}`, {
      method: request.method,
      headers: { authorization: `Bearer ${env.LLM_API_KEY}`, "content-type": "application/json" },
      body: request.body,
    });
  },
};

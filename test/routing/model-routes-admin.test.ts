// /admin/model-routes: routes stored in D1 with their fallbacks checked (names that exist, no cycle), `default`
// made from the LLM_* vars, secrets named and never stored; bad input refused naming the field, changing nothing.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { defaultRoute, fallbackProblem } from "../../src/routing/model-routes";
import { parseSettings } from "../../src/settings";
import { TEST_KEYS } from "../fixtures/keys";
import { call, type ErrorBody } from "../fixtures/sessions";

// The deployment's routes (their keys Worker secrets): an operator's to change (test/tenancy/ has an org's own).
const admin = TEST_KEYS.operator.key;
const put = (name: string, body: unknown) => call("PUT", `/admin/model-routes/${name}`, body, admin);
const openai = { provider: "openai_compatible", model: "gpt-4o-mini", baseUrl: "https://api.example.com/v1/" };
const anthropic = {
  provider: "anthropic",
  model: "claude-x",
  baseUrl: "https://api.anthropic.example",
  apiKeySecret: "TEST_ANTHROPIC_API_KEY",
};

async function refused(name: string, body: unknown): Promise<{ status: number; param: string | null }> {
  const { status, json } = await put(name, body);
  return { status, param: (json as ErrorBody).error.param };
}

const remove = (name: string) =>
  exports.default.fetch(`http://aptix.test/admin/model-routes/${name}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${admin}` },
  });

async function storedNames(): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT name FROM model_routes ORDER BY name").all<{ name: string }>();
  return results.map((r) => r.name);
}

describe("model routes", () => {
  it("adds a route (201), changes it (200) and shows it, its key as the secret's name only", async () => {
    const added = await put("fast", { ...openai, apiKeySecret: "UPSTREAM_B_KEY", fallbacks: ["default"] });
    expect(added.status).toBe(201);
    expect((added.json as { route: unknown }).route).toMatchObject({
      name: "fast",
      provider: "openai_compatible",
      baseUrl: "https://api.example.com/v1",
      apiKeySecret: "UPSTREAM_B_KEY",
      toolFormat: "native",
      fallbacks: ["default"],
      source: "stored",
    });
    expect((await put("fast", { ...openai, model: "gpt-4o" })).status).toBe(200);
    const { json } = await call("GET", "/admin/model-routes/fast", undefined, admin);
    expect((json as { route: { model: string; fallbacks: string[] } }).route).toMatchObject({
      model: "gpt-4o",
      fallbacks: [],
    });
  });

  it("stores a route's contextTokens and shows it; `default` declares none", async () => {
    expect((await put("roomy", { ...openai, contextTokens: 128_000 })).status).toBe(201);
    const { json } = await call("GET", "/admin/model-routes", undefined, admin);
    const routes = (json as { routes: { name: string; contextTokens: number | null }[] }).routes;
    expect(routes.filter((r) => r.name === "default" || r.name === "roomy").map((r) => r.contextTokens)).toEqual([
      null,
      128_000,
    ]);
  });

  it("stores a route's maxTokensField and shows it; by default max_completion_tokens for api.openai.com only", async () => {
    const openaiHost = { ...openai, baseUrl: "https://api.openai.com/v1" };
    expect((await put("reasoner", openaiHost)).status).toBe(201);
    expect((await put("other-host", openai)).status).toBe(201);
    expect((await put("told", { ...openaiHost, maxTokensField: "max_tokens" })).status).toBe(201);
    expect((await put("claude", { ...anthropic })).status).toBe(201);
    const { json } = await call("GET", "/admin/model-routes", undefined, admin);
    const routes = (json as { routes: { name: string; maxTokensField: string | null }[] }).routes;
    const field = (name: string) => routes.find((r) => r.name === name)?.maxTokensField;
    expect(["reasoner", "other-host", "told", "claude", "default"].map(field)).toEqual([
      "max_completion_tokens",
      "max_tokens",
      "max_tokens",
      null,
      "max_tokens",
    ]);
  });

  it("makes `default`'s maxTokensField by host from LLM_BASE_URL, or from LLM_MAX_TOKENS_FIELD", () => {
    const fieldOf = (vars: Record<string, string>) =>
      defaultRoute({ llm: parseSettings({ ...env, ...vars }).llm, workersAiModel: null }).maxTokensField;
    expect([
      fieldOf({ LLM_BASE_URL: "https://api.openai.com/v1" }),
      fieldOf({ LLM_BASE_URL: "https://openrouter.ai/api/v1" }),
      fieldOf({ LLM_BASE_URL: "https://openrouter.ai/api/v1", LLM_MAX_TOKENS_FIELD: "max_completion_tokens" }),
      fieldOf({ LLM_BASE_URL: "" }),
    ]).toEqual(["max_completion_tokens", "max_tokens", "max_completion_tokens", null]);
  });

  it("refuses a baseUrl that carries a user name or password, naming the field and apiKeySecret", async () => {
    const { status, json } = await put("with-userinfo", {
      ...openai,
      baseUrl: "https://me:sk-in-url@api.example.com/v1",
    });
    expect([status, (json as ErrorBody).error.param, (json as ErrorBody).error.message]).toEqual([
      400,
      "baseUrl",
      "Invalid 'baseUrl': must not carry a user name or password: store the key as a secret and name it in 'apiKeySecret'.",
    ]);
    expect(await storedNames()).not.toContain("with-userinfo");
  });

  it("refuses maxTokensField on an anthropic route and a value it does not know, naming the field", async () => {
    expect(await refused("claude-field", { ...anthropic, maxTokensField: "max_tokens" })).toEqual({
      status: 400,
      param: "maxTokensField",
    });
    expect(await refused("bad-field", { ...openai, maxTokensField: "max_output_tokens" })).toEqual({
      status: 400,
      param: "maxTokensField",
    });
  });

  it("refuses a contextTokens below 512, naming the field", async () => {
    expect(await refused("tiny", { ...openai, contextTokens: 100 })).toEqual({ status: 400, param: "contextTokens" });
  });

  it("stores a route's inputModalities and shows them; a route and `default` read text only by default", async () => {
    expect((await put("eyes", { ...openai, inputModalities: ["text", "image"] })).status).toBe(201);
    expect((await put("plain", openai)).status).toBe(201);
    const { json } = await call("GET", "/admin/model-routes", undefined, admin);
    const routes = (json as { routes: { name: string; inputModalities: string[] }[] }).routes;
    const byName = new Map(routes.map((r) => [r.name, r.inputModalities]));
    expect([byName.get("eyes"), byName.get("plain"), byName.get("default")]).toEqual([
      ["text", "image"],
      ["text"],
      ["text"],
    ]);
  });

  it("refuses image input on a workers_ai route (the binding is sent text only), naming the field", async () => {
    const body = {
      provider: "workers_ai",
      model: "@cf/meta/llama-3.2-11b-vision-instruct",
      inputModalities: ["text", "image"],
    };
    expect(await refused("cf-eyes", body)).toEqual({ status: 400, param: "inputModalities" });
  });

  it("refuses inputModalities without text, naming the field", async () => {
    expect(await refused("blind", { ...openai, inputModalities: ["image"] })).toEqual({
      status: 400,
      param: "inputModalities",
    });
  });

  it("lists `default` first, made from the vars, then the stored routes", async () => {
    await put("spare", { provider: "workers_ai", model: "@cf/meta/llama-3.3-70b-instruct-fp8-fast" });
    const { json } = await call("GET", "/admin/model-routes", undefined, admin);
    const routes = (json as { routes: { name: string; source: string; provider: string }[] }).routes;
    expect(routes[0]).toMatchObject({ name: "default", source: "vars", provider: "openai_compatible" });
    expect(routes.map((r) => r.name)).toContain("spare");
    expect(JSON.stringify(routes)).not.toContain(String(env.LLM_API_KEY));
  });

  it("refuses a fallback that names no route, naming the field", async () => {
    expect(await refused("lonely", { ...openai, fallbacks: ["default", "nowhere"] })).toEqual({
      status: 400,
      param: "fallbacks.1",
    });
    expect(await storedNames()).not.toContain("lonely");
  });

  it("refuses a chain that comes back to the route (a cycle), changing nothing", async () => {
    await put("a", openai);
    await put("b", { ...openai, fallbacks: ["a"] });
    const { status, json } = await put("a", { ...openai, fallbacks: ["b"] });
    expect(status).toBe(400);
    expect((json as ErrorBody).error.message).toBe("Invalid 'fallbacks.0': 'b' makes a cycle: a -> b -> a.");
    const { json: stored } = await call("GET", "/admin/model-routes/a", undefined, admin);
    expect((stored as { route: { fallbacks: string[] } }).route.fallbacks).toEqual([]);
  });

  it("refuses a key instead of a secret's name, and a secret that is one of aptix's own settings", async () => {
    expect(await refused("fast", { ...openai, apiKeySecret: "sk-live-123" })).toEqual({
      status: 400,
      param: "apiKeySecret",
    });
    expect(await refused("fast", { ...openai, apiKeySecret: "LLM_API_KEY" })).toEqual({
      status: 400,
      param: "apiKeySecret",
    });
  });

  it("refuses a secret name the Worker has no secret for, saying how to set it, and stores nothing", async () => {
    const { status, json } = await put("keyless", { ...openai, apiKeySecret: "NOT_SET_ANYWHERE" });
    expect([status, (json as ErrorBody).error]).toEqual([
      400,
      {
        message:
          "Invalid 'apiKeySecret': the Worker has no secret named 'NOT_SET_ANYWHERE'; set it first (wrangler secret put NOT_SET_ANYWHERE).",
        type: "invalid_request_error",
        code: "invalid_request",
        param: "apiKeySecret",
      },
    ]);
    expect(await storedNames()).not.toContain("keyless");
  });

  it("refuses an openai_compatible route without a base URL, and a workers_ai route with one", async () => {
    expect(await refused("fast", { provider: "openai_compatible", model: "m" })).toEqual({
      status: 400,
      param: "baseUrl",
    });
    expect(await refused("fast", { ...openai, provider: "workers_ai" })).toEqual({ status: 400, param: "baseUrl" });
  });

  it("refuses to store or remove `default`, which the vars make", async () => {
    expect(await refused("default", openai)).toEqual({ status: 400, param: "name" });
    expect((await remove("default")).status).toBe(400);
  });

  it("removes a route no other route falls back to (204), and 404s one that is not there", async () => {
    await put("gone", openai);
    expect((await remove("gone")).status).toBe(204);
    expect(await storedNames()).not.toContain("gone");
    expect((await remove("gone")).status).toBe(404);
  });

  it("needs the admin scope", async () => {
    expect((await call("GET", "/admin/model-routes", undefined, TEST_KEYS.chat.key)).status).toBe(403);
  });
});

describe("a mode's model route", () => {
  const mode = { displayName: "Routed", description: "A mode on its own route.", systemPrompt: "Be brief." };

  it("names an existing route, shown by GET /modes; a new mode keeps `default`", async () => {
    await put("cheap", openai);
    const routed = await call("PUT", "/admin/modes/routed", { ...mode, modelRoute: "cheap" }, admin);
    expect([routed.status, (routed.json as { mode: { modelRoute: string } }).mode.modelRoute]).toEqual([201, "cheap"]);
    await call("PUT", "/admin/modes/plain", mode, admin);
    const { json } = await call("GET", "/modes", undefined, TEST_KEYS.chat.key);
    const routes = Object.fromEntries(
      (json as { modes: { key: string; modelRoute: string }[] }).modes.map((m) => [m.key, m.modelRoute]),
    );
    expect([routes.routed, routes.plain, routes.general]).toEqual(["cheap", "default", "default"]);
  });

  it("refuses a route that does not exist, naming the field and the routes", async () => {
    const { status, json } = await call("PUT", "/admin/modes/lost", { ...mode, modelRoute: "nowhere" }, admin);
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({ param: "modelRoute", code: "invalid_request" });
    expect((json as ErrorBody).error.message).toContain("the routes are: default");
  });

  it("keeps a route a mode uses: 409 naming the mode", async () => {
    await put("busy", openai);
    await call("PUT", "/admin/modes/busyroute", { ...mode, modelRoute: "busy" }, admin);
    const response = await remove("busy");
    expect(response.status).toBe(409);
    expect(((await response.json()) as ErrorBody).error.message).toContain("the modes busyroute");
  });
});

describe("fallback chains", () => {
  const routes = new Map<string, string[]>([
    ["default", []],
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", []],
  ]);

  it("finds a cycle several routes long", () => {
    expect(fallbackProblem("c", ["a"], routes)).toEqual({ index: 0, message: "makes a cycle: c -> a -> b -> c" });
  });

  it("takes a chain that ends", () => {
    expect(fallbackProblem("d", ["a", "default"], routes)).toBeNull();
  });
});

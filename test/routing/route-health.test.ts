// GET /admin/health (issue 41): each route the caller's org may use checked live against its upstream (reachable,
// key, model, tools), each failure in the upstream's own words after redaction; the offline demo model and Workers AI
// checked in their own way.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { defaultRoute } from "../../src/routing/model-routes";
import { checkRoute } from "../../src/routing/route-health";
import { shownUpstreamWords } from "../../src/routing/upstream-models";
import { redactKeys } from "../../src/secret-redaction";
import { parseSettings } from "../../src/settings";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import { standIn } from "../llm/workers-ai-stand-in";
import { ADMIN_A, ADMIN_B, orgRouteToUpstreamB } from "../tenancy/fixtures";
import { TEST_UPSTREAM_API_KEY, TEST_UPSTREAM_B_API_KEY } from "../upstream/global-setup";
import { putRoute, toUpstreamA } from "./fixtures";

interface Check {
  name: string;
  ok: boolean;
  status: number | null;
  message: string;
}
interface Health {
  ok: boolean;
  routes: { route: string; provider: string; model: string; ok: boolean; checks: Check[] }[];
}

async function health(key: string = TEST_KEYS.operator.key, query = ""): Promise<Health> {
  const { status, json } = await call("GET", `/admin/health${query}`, undefined, key);
  expect(status).toBe(200);
  return json as Health;
}

/** The checks of one route, as [name, ok, status, message]. */
async function checksOf(route: string, key?: string) {
  const found = (await health(key)).routes.find((r) => r.route === route);
  if (!found) throw new Error(`no health for ${route}`);
  return found.checks.map((c) => [c.name, c.ok, c.status, c.message]);
}

describe("GET /admin/health", () => {
  it("passes every check of a route whose upstream answers, takes the key, lists the model and takes tools", async () => {
    const route = await toUpstreamA({ model: "scripted-model" });
    expect(await checksOf(route)).toEqual([
      ["reachable", true, 200, "answers"],
      ["key", true, 200, "accepted"],
      ["model", true, 200, "listed"],
      ["tools", true, 200, "accepted"],
    ]);
  });

  it("fails the model check of a model the upstream does not list, naming the ones it does", async () => {
    // `default` here is LLM_BASE_URL with LLM_MODEL unset: the placeholder `demo`, as the issue found it.
    const checks = await checksOf("default");
    expect(checks.at(-1)).toEqual([
      "model",
      false,
      200,
      "not among the models it lists: scripted-model, scripted-model-no-tools, scripted-reasoning-model",
    ]);
  });

  it("fails the key check with the upstream's words when it refuses the key, the key nowhere in the answer", async () => {
    const route = await toUpstreamA({ model: "scripted-model", apiKeySecret: "UPSTREAM_B_KEY" });
    expect(await checksOf(route)).toEqual([
      ["reachable", true, 401, "answers"],
      ["key", false, 401, "invalid_api_key: Incorrect API key provided."],
    ]);
    const text = JSON.stringify(await health());
    expect([text.includes(TEST_UPSTREAM_API_KEY), text.includes(TEST_UPSTREAM_B_API_KEY)]).toEqual([false, false]);
  });

  it("fails the tools check with the upstream's words when it refuses a request with a tool", async () => {
    const route = await toUpstreamA({ model: "scripted-model-no-tools" });
    expect((await checksOf(route)).at(-1)).toEqual([
      "tools",
      false,
      400,
      "api_error: registry.ollama.ai/library/scripted-model-no-tools:latest does not support tools",
    ]);
  });

  it("fails the request check of a route sending max_tokens to a model that takes max_completion_tokens only", async () => {
    const route = await toUpstreamA({ model: "scripted-reasoning-model", toolFormat: "json" });
    expect((await checksOf(route)).at(-1)).toEqual([
      "request",
      false,
      400,
      "unsupported_parameter: Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead. (the route sends max_tokens: set its maxTokensField to 'max_completion_tokens')",
    ]);
  });

  it("passes that model on a route whose maxTokensField is max_completion_tokens", async () => {
    const route = await toUpstreamA({ model: "scripted-reasoning-model", maxTokensField: "max_completion_tokens" });
    expect((await checksOf(route)).map(([name, ok]) => [name, ok])).toEqual([
      ["reachable", true],
      ["key", true],
      ["model", true],
      ["tools", true],
    ]);
  });

  it("sends no tool to a route whose tool format is json", async () => {
    const route = await toUpstreamA({ model: "scripted-model-no-tools", toolFormat: "json" });
    expect((await checksOf(route)).map(([name, ok]) => [name, ok])).toEqual([
      ["reachable", true],
      ["key", true],
      ["model", true],
    ]);
  });

  it("fails the reachable check of an upstream that does not answer, and the whole answer is not ok", async () => {
    const route = await putRoute({ provider: "openai_compatible", model: "m", baseUrl: "http://127.0.0.1:1/v1" });
    const answer = await health();
    const found = answer.routes.find((r) => r.route === route);
    expect([answer.ok, found?.ok, found?.checks.map((c) => [c.name, c.ok])]).toEqual([
      false,
      false,
      [["reachable", false]],
    ]);
  });

  it("asks an upstream with no model list about the model with a request, in its words", async () => {
    // A base URL under which the scripted Anthropic server serves nothing: 404 for /models and the request alike.
    const route = await putRoute({
      provider: "openai_compatible",
      model: "m",
      baseUrl: `${env.TEST_ANTHROPIC_URL}/nothing`,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
    });
    expect(await checksOf(route)).toEqual([
      ["reachable", true, 404, "answers (no model list at /models: 404)"],
      ["model", false, 404, "not_found_error: Not Found"],
    ]);
  });

  it("checks an Anthropic route through the Models API and a Messages request with one tool", async () => {
    const anthropic = (model: string) =>
      putRoute({
        provider: "anthropic",
        model,
        baseUrl: env.TEST_ANTHROPIC_URL,
        apiKeySecret: "TEST_ANTHROPIC_API_KEY",
      });
    const good = await anthropic("claude-scripted");
    const bad = await anthropic("claude-x");
    expect((await checksOf(good)).map(([name, ok]) => [name, ok])).toEqual([
      ["reachable", true],
      ["key", true],
      ["model", true],
      ["tools", true],
    ]);
    expect((await checksOf(bad)).at(-1)).toEqual([
      "model",
      false,
      200,
      "not among the models it lists: claude-scripted",
    ]);
  });

  it("shows an org admin the org's own routes, and another org's admin not them", async () => {
    const own = await orgRouteToUpstreamB(ADMIN_A);
    expect((await health(ADMIN_A)).routes.map((r) => r.route)).toContain(own);
    expect((await health(ADMIN_B)).routes.map((r) => r.route)).not.toContain(own);
  });

  it("gives operators the deployment's routes alone with owner=deployment, and refuses it to an admin", async () => {
    const own = await orgRouteToUpstreamB(TEST_KEYS.operator.key);
    expect((await health(TEST_KEYS.operator.key, "?owner=deployment")).routes.map((r) => r.route)).not.toContain(own);
    const { status, json } = await call("GET", "/admin/health?owner=deployment", undefined, ADMIN_A);
    expect([status, (json as { error: { code: string } }).error.code]).toEqual([403, "insufficient_scope"]);
  });
});

describe("the checks without an HTTP upstream", () => {
  const redact = (text: string) => text;

  it("says the offline demo model is the demo, and passes", async () => {
    const demo = defaultRoute({ llm: parseSettings({}).llm, workersAiModel: null });
    const result = await checkRoute(demo, { env: {}, key: "", redact });
    expect(result.ok).toBe(true);
    expect(result.checks[0]?.message).toContain("offline demo model");
  });

  it("passes a Workers AI route whose binding answers", async () => {
    const route = defaultRoute({ llm: parseSettings({}).llm, workersAiModel: "@cf/x/y" });
    const { binding, runs } = standIn({ response: "ok" });
    const result = await checkRoute(route, { env: { AI: binding }, key: "", redact });
    expect([result.ok, runs.map((r) => r.model)]).toEqual([true, ["@cf/x/y"]]);
  });

  it("says the AI binding is remote when it refuses offline, with its words", async () => {
    const route = defaultRoute({ llm: parseSettings({}).llm, workersAiModel: "@cf/x/y" });
    const { binding } = standIn(new Error("Binding AI needs to be run remotely"));
    const result = await checkRoute(route, { env: { AI: binding }, key: "", redact });
    expect(result.checks).toEqual([
      {
        name: "reachable",
        ok: false,
        status: null,
        message:
          "Workers AI did not answer: Binding AI needs to be run remotely (the AI binding is remote: offline, as under npm start, it refuses every call)",
      },
    ]);
  });

  it("takes a key out of the upstream's words", () => {
    const body = JSON.stringify({ error: { message: "Key sk-live-abcdef123 is revoked.", code: "invalid_api_key" } });
    expect(shownUpstreamWords(body, (text) => redactKeys(text, ["sk-live-abcdef123"]))).toBe(
      "invalid_api_key: Key [redacted] is revoked.",
    );
  });
});

// An admin's route write asks the upstream for its models and warns, never refuses (issue 41): a model the upstream
// does not list, a key it refuses, an upstream that does not answer; the route is saved either way, and no key is in
// a warning.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { defaultRoute } from "../../src/routing/model-routes";
import { shownUrl } from "../../src/routing/upstream-models";
import { parseSettings } from "../../src/settings";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import { uniqueName } from "../mcp/fixtures";
import { ADMIN_A, storeSecret } from "../tenancy/fixtures";
import { TEST_UPSTREAM_API_KEY, TEST_UPSTREAM_B_API_KEY } from "../upstream/global-setup";

interface Written {
  status: number;
  route: { model: string };
  warnings: { code: string; message: string; param: string }[];
}

async function put(body: Record<string, unknown>, key: string = TEST_KEYS.operator.key, query = ""): Promise<Written> {
  const name = uniqueName("warned");
  const { status, json } = await call("PUT", `/admin/model-routes/${name}${query}`, body, key);
  const written = json as Omit<Written, "status">;
  // Saved either way: the route reads back as written.
  const read = await call("GET", `/admin/model-routes/${name}`, undefined, key);
  expect(read.status).toBe(200);
  return { status, ...written };
}

const toA = (model: string, apiKeySecret = "UPSTREAM_A_KEY") => ({
  provider: "openai_compatible",
  model,
  baseUrl: `${env.TEST_UPSTREAM_URL}/v1`,
  apiKeySecret,
});

describe("PUT /admin/model-routes/:name warns from the upstream's model list", () => {
  it("warns model_not_listed, naming the models the upstream lists, and saves the route", async () => {
    const written = await put(toA("gpt-4o-mini"));
    expect(written.status).toBe(201);
    expect(written.warnings).toHaveLength(1);
    expect(written.warnings[0]).toMatchObject({ code: "model_not_listed", param: "model" });
    expect(written.warnings[0]?.message).toContain("'gpt-4o-mini'");
    expect(written.warnings[0]?.message).toContain("scripted-model, scripted-model-no-tools");
  });

  it("has no warning for a model the upstream lists", async () => {
    expect((await put(toA("scripted-model"))).warnings).toEqual([]);
  });

  it("warns key_refused with the upstream's words, and no key in them", async () => {
    const written = await put(toA("scripted-model", "UPSTREAM_B_KEY"));
    expect(written.warnings.map((w) => [w.code, w.param])).toEqual([["key_refused", "apiKeySecret"]]);
    expect(written.warnings[0]?.message).toContain("401 invalid_api_key: Incorrect API key provided.");
    const text = JSON.stringify(written);
    expect([text.includes(TEST_UPSTREAM_API_KEY), text.includes(TEST_UPSTREAM_B_API_KEY)]).toEqual([false, false]);
  });

  it("warns model_not_checked when the upstream does not answer", async () => {
    const written = await put({ provider: "openai_compatible", model: "m", baseUrl: "http://127.0.0.1:1/v1" });
    expect(written.warnings.map((w) => [w.code, w.param])).toEqual([["model_not_checked", "baseUrl"]]);
  });

  it("shows a route's URL without a user name or password (a route stored before they were refused)", () => {
    const stored = {
      ...defaultRoute({ llm: parseSettings({}).llm, workersAiModel: null }),
      provider: "openai_compatible" as const,
      baseUrl: "http://user:pass-word-1@127.0.0.1:1/v1",
    };
    expect(shownUrl(stored, "/models")).toBe("http://127.0.0.1:1/v1/models");
  });

  it("asks no host under a name kept for documentation, and says so", async () => {
    const written = await put({ provider: "openai_compatible", model: "m", baseUrl: "https://llm.example/v1" });
    expect(written.warnings.map((w) => w.code)).toEqual(["model_not_checked"]);
    expect(written.warnings[0]?.message).toContain("llm.example is under a reserved name that never resolves");
  });

  it("checks an Anthropic route against the Models API", async () => {
    const anthropic = (model: string) => ({
      provider: "anthropic",
      model,
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
    });
    expect((await put(anthropic("claude-scripted"))).warnings).toEqual([]);
    const written = await put(anthropic("claude-x"));
    expect(written.warnings.map((w) => w.code)).toEqual(["model_not_listed"]);
    expect(written.warnings[0]?.message).toContain("lists: claude-scripted");
  });

  it("checks an org's own route with the org's own secret", async () => {
    const secret = uniqueName("KEY")
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, "_");
    await storeSecret(ADMIN_A, secret);
    const body = {
      provider: "openai_compatible",
      model: "nope",
      baseUrl: `${env.TEST_UPSTREAM_B_URL}/v1`,
      apiKeySecret: secret,
    };
    const written = await put(body, ADMIN_A, "?owner=org");
    expect(written.warnings.map((w) => w.code)).toEqual(["model_not_listed"]);
  });
});

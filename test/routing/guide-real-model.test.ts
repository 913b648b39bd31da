// docs/guides/use-a-real-model.md's examples as written: every `npm start` line's vars make the `default` route
// it says (the OpenAI one, its URL and key replaced by the scripted upstream's, completes an agent turn), and its
// curl commands, run in order, store the Anthropic route (which passes GET /admin/health against the scripted
// Anthropic API once its URL, key and model are the test's), the mode on it, and the Workers AI route.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import guide from "../../docs/guides/use-a-real-model.md?raw";
import { defaultRoute, defaultRouteSource } from "../../src/routing/model-routes";
import { routeChatModel } from "../../src/routing/route-models";
import { workerKeys } from "../../src/routing/route-table";
import { parseSettings } from "../../src/settings";
import { curlCommands, guideBlocks, sendCurl } from "../fixtures/guide-blocks";
import { inSessionObject } from "../fixtures/in-object";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { TEST_UPSTREAM_API_KEY } from "../upstream/global-setup";

/** The `npm start -- --var ...` lines of the guide, each as its vars. */
function startLines(): Record<string, string>[] {
  return guideBlocks(guide)
    .flatMap((b) => b.code.split("\n"))
    .filter((line) => line.startsWith("npm start -- "))
    .map((line) => Object.fromEntries([...line.matchAll(/--var (\w+):(\S+)/g)].map((m) => [m[1] ?? "", m[2] ?? ""])));
}

/** The default route a set of vars makes, as the Worker makes it. */
function defaultOf(vars: Record<string, string>) {
  const workerEnv = { ...env, ...vars };
  const config = parseSettings(workerEnv);
  return { workerEnv, config, route: defaultRoute(defaultRouteSource(workerEnv, config)) };
}

describe("docs/guides/use-a-real-model.md", () => {
  it("makes the default route each npm start line says: OpenAI, Ollama, llama.cpp with JSON tool calls, vLLM", () => {
    const routes = startLines().map((vars) => {
      const { route } = defaultOf(vars);
      return [route.provider, route.baseUrl, route.model, route.toolFormat];
    });
    expect(routes).toEqual([
      ["openai_compatible", "https://api.openai.com/v1", "gpt-4o-mini", "native"],
      ["openai_compatible", "http://localhost:11434/v1", "llama3.2", "native"],
      ["openai_compatible", "http://localhost:8080/v1", "local", "json"],
      ["openai_compatible", "http://localhost:8000/v1", "Qwen/Qwen2.5-7B-Instruct", "native"],
    ]);
  });

  it("completes an agent turn on the OpenAI line's route, its URL and key the scripted upstream's", async () => {
    const [openai] = startLines();
    const { workerEnv, config, route } = defaultOf({
      ...openai,
      LLM_BASE_URL: `${env.TEST_UPSTREAM_URL}/v1`,
      LLM_API_KEY: TEST_UPSTREAM_API_KEY,
    });
    const model = routeChatModel(route, workerEnv, config.llm.callTimeoutMs, workerKeys(workerEnv));
    const script = await scriptUpstream([{ type: "completion", content: "Hello from gpt-4o-mini." }], undefined, {
      models: [openai?.LLM_MODEL ?? ""],
    });
    const outcome = await inSessionObject({}, ({ reasoner }) => reasoner.startTurn(`Say hello. ${script.marker}`), {
      model,
    });
    if (!outcome.ok) throw new Error(outcome.message);
    expect([outcome.value.status, outcome.value.text]).toEqual(["completed", "Hello from gpt-4o-mini."]);
  });

  it("stores the Anthropic route, the mode on it and the Workers AI route, and the Anthropic route passes its checks", async () => {
    const commands = guideBlocks(guide)
      .filter((b) => b.lang === "sh")
      .flatMap((b) => curlCommands(b.code, { APTIX_URL: "http://localhost:8788", APTIX_KEY: TEST_KEYS.operator.key }));
    expect(commands.map((c) => [c.method, new URL(c.url).pathname])).toEqual([
      ["PUT", "/admin/model-routes/claude"],
      ["PUT", "/admin/modes/claude_chat"],
      ["PUT", "/admin/model-routes/llama"],
    ]);
    const [claude, mode, llama] = commands;
    if (!claude || !mode || !llama) throw new Error("no curl commands");
    const written = JSON.parse(claude.body ?? "{}") as Record<string, unknown>;
    expect([written.provider, written.baseUrl]).toEqual(["anthropic", "https://api.anthropic.com"]);
    // The placeholders: Anthropic's URL, the secret's name and a model it serves are the scripted API's.
    claude.body = JSON.stringify({
      ...written,
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
      model: "claude-scripted",
    });
    // One after another, as a reader runs them: the mode names the route the first one stores.
    const statuses: number[] = [];
    for (const command of [claude, mode, llama]) statuses.push((await sendCurl(command)).status);
    expect(statuses).toEqual([201, 201, 201]);
    const { json } = await call("GET", "/admin/health", undefined, TEST_KEYS.operator.key);
    const health = (json as { routes: { route: string; ok: boolean }[] }).routes.find((r) => r.route === "claude");
    expect(health?.ok).toBe(true);
  });
});

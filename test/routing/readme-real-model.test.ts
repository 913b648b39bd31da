// The README's real-model example, run as written against the scripted upstream (issue 41): the `npm start` line of
// its "A real model" block is parsed here (so a change to the README changes what is tested), its placeholders (the
// provider's URL and key) replaced by the scripted upstream's, and the vars it sets become the Worker's settings, the
// `default` route made from them and a model call through that route: an agent turn completes on it. That the same
// line passes `npm start`'s model check (and the line without LLM_MODEL does not) is test/node/start-model-check.
// Running `npm start` itself here would start wrangler dev for one turn; the path from the vars to the turn is the same.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import readme from "../../README.md?raw";
import { defaultRoute, defaultRouteSource } from "../../src/routing/model-routes";
import { routeChatModel } from "../../src/routing/route-models";
import { workerKeys } from "../../src/routing/route-table";
import { parseSettings } from "../../src/settings";
import { inSessionObject } from "../fixtures/in-object";
import { scriptUpstream } from "../fixtures/upstream";
import { TEST_UPSTREAM_API_KEY } from "../upstream/global-setup";

/** The code block under "### A real model", as lines. */
function realModelBlock(): string[] {
  const section = readme.slice(readme.indexOf("\n### A real model\n"));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  return block.trim().split("\n");
}

/** The `--var NAME:VALUE` pairs of a command line. */
function varsOf(line: string): Record<string, string> {
  return Object.fromEntries([...line.matchAll(/--var (\w+):(\S+)/g)].map((m) => [m[1] ?? "", m[2] ?? ""]));
}

describe("the README's real-model example", () => {
  it("starts the server with the upstream, a model and a key, and ends with npm run doctor", () => {
    const lines = realModelBlock();
    expect(lines[0]).toMatch(/^npm start -- /);
    expect(Object.keys(varsOf(lines[0] ?? "")).sort()).toEqual(["LLM_API_KEY", "LLM_BASE_URL", "LLM_MODEL"]);
    expect(lines.at(-1)).toBe("npm run doctor");
  });

  it("completes an agent turn on the default route its vars make, against the scripted upstream", async () => {
    const written = varsOf(realModelBlock()[0] ?? "");
    // The placeholders: the provider's URL and key. The model is sent as written.
    const vars = { ...written, LLM_BASE_URL: `${env.TEST_UPSTREAM_URL}/v1`, LLM_API_KEY: TEST_UPSTREAM_API_KEY };
    const workerEnv = { ...env, ...vars };
    const config = parseSettings(workerEnv);
    const route = defaultRoute(defaultRouteSource(workerEnv, config));
    expect([route.provider, route.model]).toEqual(["openai_compatible", written.LLM_MODEL]);
    const model = routeChatModel(route, workerEnv, config.llm.callTimeoutMs, workerKeys(workerEnv));

    // The upstream serves the README's model only: a request naming any other (the demo's, say) is refused 404.
    const script = await scriptUpstream([{ type: "completion", content: "Hello from the real model." }], undefined, {
      models: [written.LLM_MODEL ?? ""],
    });
    const outcome = await inSessionObject({}, ({ reasoner }) => reasoner.startTurn(`Say hello. ${script.marker}`), {
      model,
    });
    if (!outcome.ok) throw new Error(outcome.message);
    expect([outcome.value.status, outcome.value.text]).toEqual(["completed", "Hello from the real model."]);
    const [sent] = await script.requests();
    expect([JSON.parse(sent?.body ?? "{}").model, sent?.headers.authorization]).toEqual([
      written.LLM_MODEL,
      `Bearer ${TEST_UPSTREAM_API_KEY}`,
    ]);
  });
});

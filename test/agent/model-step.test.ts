// withStepCache: one request to a session reads a mode and the base prompt from D1 once, not per iteration.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStepCache } from "../../src/agent/model-step";
import { D1AgentModeCatalogService } from "../../src/modes/catalog-service";

function countingDeps() {
  const real = new D1AgentModeCatalogService(env.DB, null);
  const reads = { modes: [] as string[], defaults: 0, prompts: 0 };
  const catalog = {
    getAllModes: (signal?: AbortSignal) => real.getAllModes(signal),
    getMode: (key: string) => {
      reads.modes.push(key);
      return real.getMode(key);
    },
    getDefaultMode: () => {
      reads.defaults++;
      return real.getDefaultMode();
    },
  };
  const deps = {
    catalog,
    basePrompt: async () => {
      reads.prompts++;
      return "You are a test agent.";
    },
  };
  return { deps, reads };
}

describe("withStepCache", () => {
  it("reads each mode, the default mode and the base prompt once however often the loop asks", async () => {
    const { deps, reads } = countingDeps();
    const cached = withStepCache(deps);
    for (let i = 0; i < 3; i++) {
      expect((await cached.catalog.getMode("general"))?.key).toBe("general");
      expect((await cached.catalog.getDefaultMode()).key).toBe("general");
      expect(await cached.basePrompt()).toBe("You are a test agent.");
    }
    expect((await cached.catalog.getMode("workspace"))?.key).toBe("workspace");
    expect(reads).toEqual({ modes: ["general", "workspace"], defaults: 1, prompts: 1 });
  });

  it("reads again for the next request, so a changed mode is seen by the next turn", async () => {
    const { deps, reads } = countingDeps();
    await withStepCache(deps).catalog.getMode("general");
    await withStepCache(deps).catalog.getMode("general");
    expect(reads.modes).toEqual(["general", "general"]);
  });
});

// Whether memory is on (src/memory/memory-policy.ts): the org's switch (default on, kept per isolate, forgotten by
// a write here) and the mode's flag (default on; the general mode offers memory_save and memory_search).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetOrgMemoryPolicy, memoryOn, orgMemoryEnabled, orgMemoryStatement } from "../../src/memory/memory-policy";
import { D1AgentModeCatalogService, upsertMode } from "../../src/modes/catalog-service";

describe("the org's switch", () => {
  it("is on for an org that never set it", async () => {
    expect(await orgMemoryEnabled(env, env.DB, "org-policy-new")).toBe(true);
  });

  it("is off once set off, as soon as the write forgets this isolate's copy", async () => {
    const org = "org-policy-off";
    expect(await orgMemoryEnabled(env, env.DB, org)).toBe(true);
    await orgMemoryStatement(env.DB, org, false).run();
    // The copy read a moment ago still answers until it is forgotten (as the PUT route does).
    expect(await orgMemoryEnabled(env, env.DB, org)).toBe(true);
    forgetOrgMemoryPolicy(env.DB);
    expect(await orgMemoryEnabled(env, env.DB, org)).toBe(false);
    expect(await memoryOn(env, env.DB, org, { memory: true })).toBe(false);
  });
});

describe("the mode's flag", () => {
  it("turns memory off for its mode while the org's switch is on", async () => {
    expect(await memoryOn(env, env.DB, "org-policy-mode", { memory: false })).toBe(false);
    expect(await memoryOn(env, env.DB, "org-policy-mode", { memory: true })).toBe(true);
  });

  it("is on by default, and an admin's mode keeps the value written", async () => {
    const catalog = new D1AgentModeCatalogService(env.DB, "org-policy-mode");
    const general = await catalog.getMode("general");
    expect(general).toMatchObject({ memory: true });
    expect(general?.tools).toEqual(expect.arrayContaining(["memory_save", "memory_search"]));
    const written = await upsertMode(env.DB, "org-policy-mode", "quiet", {
      displayName: "Quiet",
      description: "No memory.",
      systemPromptSummary: "",
      systemPrompt: "Be brief.",
      isDefault: false,
      humanRoleHints: null,
      exampleUtterances: null,
      tools: [],
      approvalRequiredTools: [],
      modelRoute: "default",
      memory: false,
    });
    expect(written.memory).toBe(false);
    expect((await catalog.getMode("quiet"))?.memory).toBe(false);
  });
});

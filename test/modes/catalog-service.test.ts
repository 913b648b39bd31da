// AgentModeCatalogService over the real D1 catalog: the seeded modes, look-ups, and corrupt rows.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { D1AgentModeCatalogService, ModeCatalogError } from "../../src/modes/catalog-service";
import { freshDatabase } from "../fixtures/database";

beforeEach(freshDatabase);

const catalog = () => new D1AgentModeCatalogService(env.DB, null);

describe("AgentModeCatalogService", () => {
  it("reads the seeded catalog, default first", async () => {
    const modes = await catalog().getAllModes();
    expect(modes.map((m) => m.key)).toEqual(["general", "ddr_authoring", "workspace"]);
    expect(modes.filter((m) => m.isDefault).map((m) => m.key)).toEqual(["general"]);
    for (const mode of modes) {
      expect(mode.id).toMatch(/^[0-9a-f]{32}$/);
      expect(mode.systemPrompt.length).toBeGreaterThan(200);
      expect(mode.exampleUtterances?.length).toBeGreaterThan(0);
    }
  });

  it("finds a mode by key and the default mode, and gives null for an unknown key", async () => {
    expect((await catalog().getMode("workspace"))?.displayName).toBe("Workspace");
    expect((await catalog().getDefaultMode()).key).toBe("general");
    expect(await catalog().getMode("nope")).toBeNull();
  });

  it("stops when its signal is aborted", async () => {
    await expect(catalog().getAllModes(AbortSignal.abort())).rejects.toThrow();
  });

  it("reports a corrupt row by its key, id and field instead of crashing", async () => {
    await env.DB.prepare("UPDATE modes SET tools = '{\"not\":\"an array\"}' WHERE key = 'workspace'").run();
    const failure = await catalog()
      .getAllModes()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModeCatalogError);
    expect((failure as Error).message).toBe(
      "Mode catalog row 'workspace' (id 99e94fae89237b2bcb2a7942b575ee58) is corrupt: tools Invalid input: expected array, received object.",
    );
  });

  it("refuses a second default mode in SQL", async () => {
    await expect(env.DB.prepare("UPDATE modes SET is_default = 1 WHERE key = 'workspace'").run()).rejects.toThrow(
      /UNIQUE constraint failed/,
    );
  });
});

// TUL-011 §2 and §5: every production tool registers cleanly, with deterministic schemas.
import { describe, expect, it } from "vitest";
import {
  ALWAYS_OFFERED_TOOLS,
  createAgentToolRegistry,
  createProductionTools,
  PRODUCTION_TOOL_NAMES,
} from "../../src/tools";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { RecordingSessionManager, sampleMode, stubCatalog } from "../fixtures/tool-context";

const deps = () => ({
  logger: new RecordingAdminLogger(),
  sessionManager: new RecordingSessionManager(),
  catalog: stubCatalog([sampleMode()]),
});

describe("StartupTests", () => {
  it("ConfigureServices_WithValidTools_DoesNotThrow", () => {
    const d = deps();
    const registry = createAgentToolRegistry(d);
    expect(registry.tools.map((tool) => tool.name)).toEqual([...PRODUCTION_TOOL_NAMES]);
    expect(d.logger.errors).toHaveLength(0);
  });

  it("registers the three specified tools and offers the two session tools in every mode", () => {
    expect(PRODUCTION_TOOL_NAMES).toEqual(
      expect.arrayContaining(["agent_hello_world", "agent_list_modes", "agent_change_mode"]),
    );
    expect(ALWAYS_OFFERED_TOOLS).toEqual(["agent_change_mode", "agent_list_modes"]);
  });

  it("gives every production tool the same schema JSON on every call", () => {
    const first = createProductionTools(deps()).map((tool) => JSON.stringify(tool.getSchema()));
    const second = createProductionTools(deps()).map((tool) => JSON.stringify(tool.getSchema()));
    expect(second).toEqual(first);
    for (const json of first) expect(json).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}|\d{4}-\d{2}-\d{2}T/);
  });
});

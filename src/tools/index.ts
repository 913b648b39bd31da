// The production tool list: the one place every tool the model can call is named.
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import type { AgentSessionManager } from "../session/session-manager";
import { ModeChangeTool } from "./agent-change-mode";
import { HelloWorldTool } from "./agent-hello-world";
import { AgentListModesTool } from "./agent-list-modes";
import type { AgentTool } from "./contract";
import { AgentToolRegistry } from "./registry";
import type { WorkspacePolicy } from "./workspace-path";
import { WorkspaceReadFileTool } from "./workspace-read-file";
import { WorkspaceWriteFileTool } from "./workspace-write-file";

/** What tools are constructed with (TUL-011 §2: the logger plus the services each one needs). */
export interface AgentToolDependencies {
  logger: AdminLogger;
  sessionManager: AgentSessionManager;
  catalog: AgentModeCatalogService;
  /** Which workspace paths the file tools refuse (WORKSPACE_PROTECTED_PATHS); the defaults when absent. */
  workspace?: WorkspacePolicy;
}

/** Offered in every mode, whatever the mode's own list says (TUL-007 §3.1). */
export const ALWAYS_OFFERED_TOOLS: readonly string[] = [ModeChangeTool.ToolName, AgentListModesTool.ToolName];

const PRODUCTION_TOOLS = [
  { type: ModeChangeTool, create: (d: AgentToolDependencies) => new ModeChangeTool(d.sessionManager, d.logger) },
  { type: AgentListModesTool, create: (d: AgentToolDependencies) => new AgentListModesTool(d.catalog, d.logger) },
  { type: HelloWorldTool, create: (d: AgentToolDependencies) => new HelloWorldTool(d.logger) },
  {
    type: WorkspaceReadFileTool,
    create: (d: AgentToolDependencies) => new WorkspaceReadFileTool(d.logger, d.workspace),
  },
  {
    type: WorkspaceWriteFileTool,
    create: (d: AgentToolDependencies) => new WorkspaceWriteFileTool(d.logger, d.workspace),
  },
] as const;

/** Every production tool's ToolName (what a mode's `tools` list may name). */
export const PRODUCTION_TOOL_NAMES: readonly string[] = PRODUCTION_TOOLS.map((entry) => entry.type.ToolName);

export function createProductionTools(deps: AgentToolDependencies): AgentTool[] {
  return PRODUCTION_TOOLS.map((entry) => entry.create(deps));
}

/** Startup's ConfigureServices: a registry holding every production tool; throws if any breaks the contract. */
export function createAgentToolRegistry(deps: AgentToolDependencies): AgentToolRegistry {
  const registry = new AgentToolRegistry(deps.logger);
  for (const tool of createProductionTools(deps)) registry.registerTool(tool);
  return registry;
}

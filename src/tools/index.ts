// The production tool list: the one place every tool the model can call is named.
import type { Db } from "../db";
import type { MemoryAccess } from "../memory/memory-access";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { MODE_CHANGE_TOOL_NAME, modeChangeTool } from "./agent-change-mode";
import { helloWorldTool } from "./agent-hello-world";
import { agentListModesTool, LIST_MODES_TOOL_NAME } from "./agent-list-modes";
import { currentTimeTool } from "./clock-current-time";
import type { AgentTool } from "./contract";
import { CONVERSATION_SEARCH_TOOL_NAME, conversationSearchTool } from "./conversation-search";
import { MEMORY_FORGET_TOOL_NAME, memoryForgetTool } from "./memory-forget";
import { MEMORY_SAVE_TOOL_NAME, memorySaveTool } from "./memory-save";
import { MEMORY_SEARCH_TOOL_NAME, memorySearchTool } from "./memory-search";
import { AgentToolRegistry } from "./registry";
import type { AgentSessionManager } from "./session-manager";
import type { WorkspacePolicy } from "./workspace-path";
import { WORKSPACE_READ_FILE_TOOL_NAME, workspaceReadFileTool } from "./workspace-read-file";
import { WORKSPACE_WRITE_FILE_TOOL_NAME, workspaceWriteFileTool } from "./workspace-write-file";

/** What tools are given (TUL-011 §2: the logger plus the services each one needs). */
export interface AgentToolDependencies {
  logger: AdminLogger;
  sessionManager: AgentSessionManager;
  catalog: AgentModeCatalogService;
  /** Which workspace paths the file tools refuse (WORKSPACE_PROTECTED_PATHS); the defaults when absent. */
  workspace?: WorkspacePolicy;
  /** D1, where conversation_search reads the index of the owner's messages; absent, its calls fail cleanly. */
  db?: Db;
  /** The session owner's memories (the memory tools); absent, they refuse ("Memory is not available here."). */
  memory?: MemoryAccess;
}

/** Offered in every mode, whatever the mode's own list says (TUL-007 §3.1). */
export const ALWAYS_OFFERED_TOOLS: readonly string[] = [MODE_CHANGE_TOOL_NAME, LIST_MODES_TOOL_NAME];

/** Each production tool's ToolName, and how it is made from the dependencies. */
const PRODUCTION_TOOLS: readonly { name: string; create: (d: AgentToolDependencies) => AgentTool }[] = [
  { name: MODE_CHANGE_TOOL_NAME, create: (d) => modeChangeTool(d.sessionManager, d.logger) },
  { name: LIST_MODES_TOOL_NAME, create: (d) => agentListModesTool(d.catalog, d.logger) },
  { name: helloWorldTool.name, create: () => helloWorldTool },
  { name: WORKSPACE_READ_FILE_TOOL_NAME, create: (d) => workspaceReadFileTool(d.logger, d.workspace) },
  { name: WORKSPACE_WRITE_FILE_TOOL_NAME, create: (d) => workspaceWriteFileTool(d.logger, d.workspace) },
  { name: currentTimeTool.name, create: () => currentTimeTool },
  {
    name: CONVERSATION_SEARCH_TOOL_NAME,
    create: (d) => conversationSearchTool(d.db, { memory: d.memory, catalog: d.catalog }),
  },
  { name: MEMORY_SAVE_TOOL_NAME, create: (d) => memorySaveTool(d.memory, d.catalog, d.logger) },
  { name: MEMORY_SEARCH_TOOL_NAME, create: (d) => memorySearchTool(d.memory, d.catalog, d.logger) },
  { name: MEMORY_FORGET_TOOL_NAME, create: (d) => memoryForgetTool(d.memory, d.catalog, d.logger) },
];

/** Every production tool's ToolName (what a mode's `tools` list may name), known without making the tools. */
export const PRODUCTION_TOOL_NAMES: readonly string[] = PRODUCTION_TOOLS.map((entry) => entry.name);

export function createProductionTools(deps: AgentToolDependencies): AgentTool[] {
  return PRODUCTION_TOOLS.map((entry) => entry.create(deps));
}

/** Startup's ConfigureServices: a registry holding every production tool; throws if any breaks the contract. */
export function createAgentToolRegistry(deps: AgentToolDependencies): AgentToolRegistry {
  const registry = new AgentToolRegistry(deps.logger);
  for (const tool of createProductionTools(deps)) registry.registerTool(tool);
  return registry;
}

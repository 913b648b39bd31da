// One step of the loop's conversation with the model: the request it gets (enhanced prompt, bounded history,
// offered tools) and what its response means (an answer, tool calls, or a malformed JSON call).
import type { ChatResponse, ModelToolCall } from "../llm/chat-model";
import type { AgentMode } from "../modes/agent-mode";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import { isRemoteToolReference } from "../modes/tool-references";
import type { RecalledMemory } from "../prompts/memory-section";
import { type EnhancedPrompt, enhanceSystemPrompt, type ToolCallFormat } from "../prompts/system-prompt-enhancer";
import type { FormattedRequest, ModelRouter, RouteInput } from "../routing/model-router";
import type { ToolCategory } from "../tools/categories";
import { CLIENT_TOOL_CATEGORY } from "../tools/client-function-tool";
import type { AgentTool } from "../tools/contract";
import type { AgentToolRegistry } from "../tools/registry";
import type { ChatTool } from "../wire/openai";
import type { AgentConfig } from "./agent-config";
import { withoutImages } from "./attachment-content";
import { contextBudgets, type RouteBudgets } from "./context-budgets";
import { boundedHistory, currentTurnLength, historyInFormat } from "./conversation";
import { parseModelText } from "./json-tool-call";
import {
  latestUserMessage,
  type MemoryRecallSource,
  memoryOncePerMode,
  recallForPrompt,
  withoutWithheld,
} from "./memory-step";
import { type RequestFit, roomForHistory } from "./request-fit";
import { requestEstimate, type TokenCalibration } from "./token-calibration";
import type { TurnGuardrails } from "./turn-guardrails";
import type { TurnState, TurnStore } from "./turn-store";

export interface ModelStepDeps {
  store: TurnStore;
  catalog: AgentModeCatalogService;
  registry: AgentToolRegistry;
  config: AgentConfig;
  basePrompt: () => Promise<string>;
  /** The tools of a mode's `mcp:` entries beside the built-in ones; absent, a mode offers built-in tools only. */
  remoteTools?: RemoteToolSource;
  /** Tools the client declared for this request (the OpenAI door), offered beside the mode's. */
  clientTools?: ClientToolSet;
  /** Where the budgets come from when the mode's route declares a context length. */
  router?: Pick<ModelRouter, "contextTokens">;
  /** The estimate calibrated to each route's model (absent: four characters a token). */
  calibration?: TokenCalibration | undefined;
  /** The prompt and tools made for a mode, kept by withStepCache for the rest of the request. */
  prompts?: WeakMap<AgentMode, Promise<PromptForMode>>;
  /** The session owner's memories for the prompt, and whether memory is on; absent, no memory. */
  memory?: MemoryRecallSource | undefined;
  /** The turn's guardrails: the conversation as the model reads it (a mask's values as their placeholders). */
  guard?: Pick<TurnGuardrails, "forModel"> | undefined;
}

/**
 * The client's own tools for one request (already checked against the tool contract), and whether the mode's
 * client-final tools are left out (a client that declares its own tools cannot carry out ours).
 */
export interface ClientToolSet {
  tools: AgentTool[];
  hideModeClientTools: boolean;
}

/** The tools a mode's list names beyond the built-in ones (MCP servers'), registered beside `base`'s tools. */
export type RemoteToolSource = (
  toolNames: readonly string[],
  base: AgentToolRegistry,
) => Promise<{ registry: AgentToolRegistry; offered: string[]; categories: ToolCategory[] }>;

/** A mode's prompt and offered tools in one tool format. */
export interface PromptInFormat {
  prompt: string;
  chatTools: ChatTool[];
  offered: Set<string>;
}

interface PromptForMode {
  /** The route the mode's model calls take. */
  route: string;
  /** The route's declared context length (model tokens), or null. */
  contextTokens: number | null;
  /** The history and prompt budgets on that route, as they stood when the prompt was made. */
  budgets: RouteBudgets;
  /** The prompt in a tool format, made once per format. */
  inFormat(format: ToolCallFormat): PromptInFormat;
  approvalRequired: Set<string>;
  /** Every tool this request may run: the built-in ones and the mode's remote tools. */
  registry: AgentToolRegistry;
}

/**
 * The same deps, reading the catalog's modes and the base prompt from D1 once for the life of `deps` (one
 * request to the session: a turn, or its continuation) instead of on every iteration of the loop.
 */
export function withStepCache<D extends Pick<ModelStepDeps, "catalog" | "basePrompt" | "memory">>(deps: D): D {
  const modes = new Map<string, Promise<AgentMode | null>>();
  let defaultMode: Promise<AgentMode> | null = null;
  let basePrompt: Promise<string> | null = null;
  const catalog: AgentModeCatalogService = {
    getAllModes: (signal) => deps.catalog.getAllModes(signal),
    getMode: (key) => {
      const hit = modes.get(key) ?? deps.catalog.getMode(key);
      // A failed read is kept too, and fails again where it is awaited; it is not an unhandled rejection.
      hit.catch(() => {});
      modes.set(key, hit);
      return hit;
    },
    getDefaultMode: () => {
      defaultMode ??= deps.catalog.getDefaultMode();
      return defaultMode;
    },
  };
  return {
    ...deps,
    catalog,
    basePrompt: () => {
      basePrompt ??= deps.basePrompt();
      return basePrompt;
    },
    // The enhanced prompt is a pure function of the base prompt and the mode, both read once here: made once
    // per mode (a mode change mid-turn makes the new mode's) rather than on every iteration.
    prompts: new WeakMap<AgentMode, Promise<PromptForMode>>(),
    // The owner's memories, read once per mode: the prefetch's read is the one the prompt is made with.
    ...(deps.memory ? { memory: memoryOncePerMode(deps.memory) } : {}),
  };
}

export type ModelRequest = Awaited<ReturnType<typeof buildModelRequest>>;

/**
 * Starts the reads the first model request needs (the session's mode, the base prompt and, given the person's
 * `message`, what the prompt shows of their memories) so they overlap other waits; never rejects (a failed read fails
 * again, cached, where buildModelRequest awaits it). It settles once the mode and the base prompt are read: the
 * memory read goes on meanwhile, beside the turn's start (its message stored, its first frames), and the first model
 * request waits for it.
 */
export async function prefetchModelRequest(deps: ModelStepDeps, message?: string): Promise<void> {
  const mode = deps.store.identity().mode;
  const found = deps.catalog.getMode(mode);
  if (deps.memory && message !== undefined) {
    found
      .then(async (m) => {
        const effective = m ?? (await deps.catalog.getDefaultMode());
        const { budgets } = await routeBudgets(deps, effective);
        await recallForPrompt(deps.memory, effective, message, budgets.promptBudgetTokens);
      })
      .catch(() => undefined);
  }
  await Promise.all([found, deps.basePrompt()]).catch(() => undefined);
}

/** The mode's route's declared context and the budgets on it. */
async function routeBudgets(
  deps: Pick<ModelStepDeps, "router" | "config" | "calibration">,
  mode: AgentMode,
): Promise<{ contextTokens: number | null; budgets: RouteBudgets }> {
  const contextTokens = (await deps.router?.contextTokens?.(mode.modelRoute)) ?? null;
  return {
    contextTokens,
    budgets: contextBudgets(deps.config, contextTokens, deps.calibration?.ratio(mode.modelRoute) ?? 1),
  };
}

/**
 * The next model request of the turn: the route it takes, and its messages and tools in whichever tool format
 * the route that serves it uses (the system prompt and the history's tool calls are written differently).
 */
export async function buildModelRequest(deps: ModelStepDeps, turn: TurnState) {
  const { store } = deps;
  const forMode = await currentPromptForMode(deps);
  const native = forMode.inFormat("native");
  const summary = store.summary();
  const fixed = requestEstimate([{ role: "system", content: native.prompt }], native.chatTools);
  const currentMessages = currentTurnLength(store.newestFirst(), turn.turnId);
  /** The budgets, history and fit on a route of the chain, from its own context and its model's ratio. */
  const sizeFor = (route: string, contextTokens: number | null) => {
    // The budgets in the route's model's tokens, turned into our estimate's by what its model reported so far.
    const budgets = contextBudgets(deps.config, contextTokens, deps.calibration?.ratio(route) ?? 1);
    // On a route that declares its context, the earlier turns get what the prompt, tools and answer leave of it.
    const room = roomForHistory(budgets, fixed);
    const history = boundedHistory(
      store.newestFirst(),
      turn.turnId,
      Math.min(budgets.historyBudgetTokens, room),
      summary,
    );
    const fit: RequestFit = { route, budgets, summarised: summary !== null, currentMessages };
    return { history, fit };
  };
  const primary = sizeFor(forMode.route, forMode.contextTokens);
  const sized = new Map<string, ReturnType<typeof sizeFor>>();
  /** The request as sized for the chain's route `input` names (a fallback's context may be smaller than the mode's). */
  const sizedFor = (input: RouteInput) => {
    if (input.route === undefined || input.contextTokens === undefined) return primary;
    // The mode's own route (the usual case) is sized already: its history is not read twice.
    if (input.route === forMode.route && input.contextTokens === forMode.contextTokens) return primary;
    const key = `${input.route}\u0000${input.contextTokens}`;
    let made = sized.get(key);
    if (!made) {
      made = sizeFor(input.route, input.contextTokens);
      sized.set(key, made);
    }
    return made;
  };
  return {
    route: forMode.route,
    fit: primary.fit,
    /** The check of the request sent to the route `input` names, against its own context. */
    fitFor: (input: RouteInput): RequestFit => sizedFor(input).fit,
    inFormat: (format: ToolCallFormat) => forMode.inFormat(format),
    /** The request as a route in `format` receives it; one that reads no images gets a note in place of each. */
    forFormat: (format: ToolCallFormat, input: RouteInput = { images: true }): FormattedRequest => {
      const prompt = forMode.inFormat(format);
      const { history, fit } = sizedFor(input);
      const formatted = historyInFormat(history, format);
      const messages = deps.guard ? deps.guard.forModel(formatted) : formatted;
      return {
        messages: [
          { role: "system" as const, content: prompt.prompt },
          ...(input.images ? messages : withoutImages(messages)),
        ],
        ...(format === "native" ? { tools: prompt.chatTools } : {}),
        ...(fit.budgets.answerTokens !== null ? { maxTokens: fit.budgets.answerTokens } : {}),
      };
    },
    approvalRequired: forMode.approvalRequired,
    registry: forMode.registry,
  };
}

/** Every tool the session's mode can run now (for a call approved after a pause): built-in and remote. */
export async function registryForMode(deps: ModelStepDeps): Promise<AgentToolRegistry> {
  return (await currentPromptForMode(deps)).registry;
}

async function currentPromptForMode(deps: ModelStepDeps): Promise<PromptForMode> {
  const { store, catalog } = deps;
  const [found, basePrompt] = await Promise.all([catalog.getMode(store.identity().mode), deps.basePrompt()]);
  const mode: AgentMode = found ?? (await catalog.getDefaultMode());
  let forMode = deps.prompts?.get(mode);
  if (!forMode) {
    forMode = promptForMode(deps, mode, basePrompt);
    deps.prompts?.set(mode, forMode);
  }
  return forMode;
}

/**
 * The tools a mode offers and the registry of the tools it may run: the built-in ones, and those its remote
 * references (`mcp:`) stand for, as found now (a server that is down stands for none), and the client's own.
 */
async function toolsForMode(input: {
  mode: AgentMode;
  registry: AgentToolRegistry;
  remoteTools?: RemoteToolSource | undefined;
  clientTools?: ClientToolSet | undefined;
}): Promise<{ mode: AgentMode; registry: AgentToolRegistry }> {
  const { mode, clientTools } = input;
  const remote =
    input.remoteTools && mode.tools.some(isRemoteToolReference)
      ? await input.remoteTools(mode.tools, input.registry)
      : null;
  let registry = remote?.registry ?? input.registry;
  // The mode's remote references stand for the tools found behind them.
  let tools = remote ? [...mode.tools.filter((t) => !isRemoteToolReference(t)), ...remote.offered] : mode.tools;
  if (clientTools) {
    const withRemote = registry;
    if (clientTools.hideModeClientTools) {
      tools = tools.filter((t) => withRemote.getTool(t)?.isToolFullyExecutedOnServer !== false);
    }
    registry = registry.extended([CLIENT_TOOL_CATEGORY]);
    for (const tool of clientTools.tools) registry.registerTool(tool);
    tools = [...tools, ...clientTools.tools.map((t) => t.name)];
  }
  return { mode: tools === mode.tools ? mode : { ...mode, tools }, registry };
}

function enhanceWith(
  basePrompt: string,
  base: AgentToolRegistry,
  found: { mode: AgentMode; registry: AgentToolRegistry },
  format: ToolCallFormat,
  budgetTokens: number,
  memories: readonly RecalledMemory[],
): EnhancedPrompt {
  return enhanceSystemPrompt({
    basePrompt,
    mode: found.mode,
    registeredTools: found.registry.tools,
    format,
    budgetTokens,
    ...(found.registry !== base ? { categories: found.registry.categories } : {}),
    ...(memories.length > 0 ? { memories } : {}),
  });
}

/** The enhanced prompt of a mode in one tool format, and the registry of the tools it may run. */
export async function enhanceForMode(input: {
  basePrompt: string;
  mode: AgentMode;
  registry: AgentToolRegistry;
  remoteTools?: RemoteToolSource | undefined;
  clientTools?: ClientToolSet | undefined;
  format: ToolCallFormat;
  config: Pick<AgentConfig, "promptBudgetTokens">;
  /** The caller's memories, as a turn of theirs would show them for `message` (absent: no memory). */
  memory?: MemoryRecallSource | undefined;
  message?: string;
}): Promise<{ enhanced: EnhancedPrompt; registry: AgentToolRegistry }> {
  const budget = input.config.promptBudgetTokens;
  const [found, recall] = await Promise.all([
    toolsForMode(input),
    recallForPrompt(input.memory, input.mode, input.message ?? "", budget),
  ]);
  const offered = { ...found, mode: withoutWithheld(found.mode, recall) };
  const enhanced = enhanceWith(input.basePrompt, input.registry, offered, input.format, budget, recall.memories);
  return { enhanced, registry: found.registry };
}

async function promptForMode(deps: ModelStepDeps, mode: AgentMode, basePrompt: string): Promise<PromptForMode> {
  const [tools, { contextTokens, budgets, recall }] = await Promise.all([
    toolsForMode({ mode, registry: deps.registry, remoteTools: deps.remoteTools, clientTools: deps.clientTools }),
    routeBudgets(deps, mode).then(async (sized) => ({
      ...sized,
      recall: await recallForPrompt(deps.memory, mode, latestUserMessage(deps.store), sized.budgets.promptBudgetTokens),
    })),
  ]);
  // Memory off: its tools are neither described nor offered, so the model cannot call them.
  const found = { ...tools, mode: withoutWithheld(tools.mode, recall) };
  const formats = new Map<ToolCallFormat, PromptInFormat>();
  return {
    route: mode.modelRoute,
    contextTokens,
    budgets,
    inFormat(format) {
      let made = formats.get(format);
      if (!made) {
        const enhanced = enhanceWith(
          basePrompt,
          deps.registry,
          found,
          format,
          budgets.promptBudgetTokens,
          recall.memories,
        );
        made = {
          prompt: enhanced.prompt,
          chatTools: enhanced.tools.map((tool): ChatTool => {
            const schema = tool.getSchema();
            return {
              type: "function",
              function: { name: schema.name, description: schema.description, parameters: schema.parameters },
            };
          }),
          offered: new Set(enhanced.tools.map((t) => t.name)),
        };
        formats.set(format, made);
      }
      return made;
    },
    approvalRequired: approvalRequired(mode, found.registry),
    registry: found.registry,
  };
}

/** The tools the mode makes wait for approval; `mcp:<server>[/<tool>]` stands for the tools found behind it. */
function approvalRequired(mode: AgentMode, registry: AgentToolRegistry): Set<string> {
  const names = new Set(mode.approvalRequiredTools);
  if (!mode.approvalRequiredTools.some(isRemoteToolReference)) return names;
  for (const tool of registry.tools) {
    if (!tool.mcp) continue;
    if (names.has(`mcp:${tool.mcp.server}`) || names.has(`mcp:${tool.mcp.server}/${tool.mcp.tool}`))
      names.add(tool.name);
  }
  return names;
}

export type ModelStep =
  | { kind: "answer"; text: string }
  | { kind: "malformed"; problem: string }
  | { kind: "calls"; text: string; calls: ModelToolCall[]; terminate: boolean };

/**
 * Reads a response in the configured tool format. Every call keeps an id unique in the turn: one without
 * an id gets `call_<turn>_<iteration>_<position>`, and one whose id was already used (twice in one response,
 * or in an earlier response of the turn) gets `<id>_<iteration>_<position>`. No call is ever dropped.
 */
export function readModelStep(
  response: ChatResponse,
  turn: TurnState,
  toolFormat: ToolCallFormat,
  usedIds: ReadonlySet<string> = new Set(),
): ModelStep {
  const taken = new Set(usedIds);
  const uniqueId = (id: string, position: number): string => {
    let candidate = id || `call_${turn.turnId.slice(0, 8)}_${turn.iterations}_${position}`;
    for (let n = 0; taken.has(candidate); n++) {
      candidate = `${id || "call"}_${turn.iterations}_${position}${n > 0 ? `_${n}` : ""}`;
    }
    taken.add(candidate);
    return candidate;
  };
  if (toolFormat === "native") {
    if (response.toolCalls.length === 0) return { kind: "answer", text: response.content ?? "" };
    const calls = response.toolCalls.map((c, i) => ({ ...c, id: uniqueId(c.id, i) }));
    return { kind: "calls", text: response.content ?? "", calls, terminate: false };
  }
  const parsed = parseModelText(response.content);
  if (parsed.kind === "text") return { kind: "answer", text: parsed.text };
  if (parsed.kind === "malformed") return parsed;
  return {
    kind: "calls",
    text: "",
    calls: [{ id: uniqueId("", 0), name: parsed.tool, arguments: parsed.parametersJson }],
    terminate: parsed.terminate,
  };
}

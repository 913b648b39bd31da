// ReasonerFactory: what the session object's agent loop is built from (its settings, catalog, tool registry, MCP
// tools, events and questions, made once) and, per request, the caller's model router, key budget, org meter and
// logger. The turn's admission builds one AgentReasoner per request that drives the loop, and the turn runs with it;
// the status questions need none (turn-status.ts).
import { AgentReasoner, type AgentReasonerDeps } from "../agent/agent-reasoner";
import type { ModelCallBudget, TurnMeter } from "../agent/model-call-budget";
import type { TokenCalibration } from "../agent/token-calibration";
import type { TurnEndingDeps } from "../agent/turn-ending";
import type { TurnEvents } from "../agent/turn-events";
import type { TurnGuardrailSource, VaultKeeper } from "../agent/turn-guardrails";
import type { BookmarkedDb } from "../db";
import { guardrailClassifier } from "../guardrails/guardrail-check";
import { recordGuardrailDecisions } from "../guardrails/guardrail-counts";
import { effectiveGuardrails } from "../guardrails/guardrail-policy";
import { McpToolSource } from "../mcp/mcp-tool-source";
import { memoryAccess } from "../memory/memory-access";
import { keyModelCallBudget } from "../metering/model-call-limit";
import { orgTurnMeter, turnUsageRecorder } from "../metering/model-call-meter";
import type { UsageRecord } from "../metering/usage-records";
import { type AgentModeCatalogService, catalogKnowing, D1AgentModeCatalogService } from "../modes/catalog-service";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { tracingFor } from "../observability/tracing/tracing";
import { envRouter } from "../routing/env-router";
import type { ChainRouter } from "../routing/model-router";
import { secretRedactor } from "../secret-redaction";
import { settings } from "../settings";
import { createAgentToolRegistry } from "../tools";
import { clientFunctionTool } from "../tools/client-function-tool";
import type { AgentSessionManager } from "../tools/session-manager";
import type { ChatTool } from "../wire/openai";
import { type Caller, callLogger } from "./caller";
import type { CopyRead, MemoryCopy } from "./memory-copy";
import { notifyMemoryChange } from "./memory-notify";
import { ownerCopyRead, ownerMemoryRecall } from "./memory-recall";
import { type ModePin, pinnedCatalog } from "./mode-pin";
import { cachedTurnReads, sessionBasePrompt, type TurnReads } from "./session-model";
import type { SessionStore } from "./session-store";
import { type TimelineSink, TurnRecorder } from "./turn-recorder";

/** What one request's loop is built with, besides what the object shares. */
export interface ReasonerOptions {
  caller?: Caller | undefined;
  /** The budget to draw on, when the caller's first model call was already counted. */
  budget?: ModelCallBudget | undefined;
  /** The client's own tools for this request (the OpenAI door); the mode's client-final tools are left out. */
  clientTools?: ChatTool[] | undefined;
  /** No one can answer an MCP server's question on this request's door: it is declined. */
  declineElicitations?: boolean | undefined;
  /** The mode and base prompt the request's sender read just now: the turn does not read them again. */
  reads?: TurnReads | undefined;
}

export interface ReasonerFactoryDeps {
  env: Cloudflare.Env;
  db: BookmarkedDb;
  store: SessionStore;
  logger: JsonAdminLogger;
  events: TurnEvents;
  sessionManager: AgentSessionManager;
  elicit: NonNullable<AgentReasonerDeps["elicit"]>;
  createBranch: (mode: string) => Promise<string>;
  /** Keeps the object alive for work that finishes after the reply (meter settles). */
  waitUntil: (work: Promise<unknown>) => void;
  /** Where each model call's usage row goes: the session's usage outbox (src/session/usage-outbox.ts). */
  keepUsage: (record: UsageRecord) => void;
  /** Where each turn's steps are recorded (its timeline). */
  steps?: TimelineSink | undefined;
  /** The session's token estimate, calibrated per route from reported usage. */
  calibration?: TokenCalibration | undefined;
  /** The session's copy of its owner's memories (src/session/memory-copy.ts). */
  memoryCopy?: MemoryCopy | undefined;
  /** The mode version the session is pinned to (src/session/mode-pin.ts); null or absent: none. */
  pin?: (() => ModePin | null) | undefined;
  /** The session's mask vault (src/session/session-vault.ts); absent, no guardrail is checked on its turns. */
  vault?: VaultKeeper | undefined;
}

type SharedDeps = Pick<
  AgentReasonerDeps,
  | "store"
  | "registry"
  | "catalog"
  | "basePrompt"
  | "config"
  | "createBranchSession"
  | "events"
  | "remoteTools"
  | "elicit"
  | "memory"
>;

export class ReasonerFactory {
  private shared?: SharedDeps;
  private redact?: (text: string) => string;
  /** The keys the session's org's routes send (its own secrets among them): a trace's content never shows them. */
  private orgKeys: readonly string[] = [];
  /** The keys `redact` was made with. */
  private redactKeys = "";
  /** What the MCP servers list, kept for the object's life (with a TTL); connections close when idle. */
  private mcp?: McpToolSource;
  /**
   * The version of the session's mode as the loop last read it: its turn's timeline, trace and usage rows carry it.
   * Turns run one at a time, and each model step reads the mode before it calls the model.
   */
  private modeVersion: number | null = null;

  constructor(private readonly deps: ReasonerFactoryDeps) {}

  /** How a turn ends without the loop (an expired or cancelled pause, a broken or interrupted turn). */
  ending(caller?: Caller): TurnEndingDeps {
    const { store, events, env } = this.deps;
    return { store, events, config: settings(env).agent, logger: callLogger(this.deps.logger, caller), now: Date.now };
  }

  /** A turn is driven: MCP connections stay open meanwhile. */
  keepOpen(): void {
    this.mcp?.keepOpen();
  }

  closeWhenIdle(): void {
    this.mcp?.closeWhenIdle();
  }

  private sharedDeps(): SharedDeps {
    if (this.shared) return this.shared;
    const { env, db, store, logger, events, elicit } = this.deps;
    const config = settings(env);
    // The session's org's view of the catalog: its own modes and the deployment's (a pinned session's mode: its version).
    const catalog = pinnedCatalog(new D1AgentModeCatalogService(db, store.identity().org), this.pin);
    const mcp = new McpToolSource(db, env, store.identity().org, logger, config.mcp.discoveryTtlMs);
    this.mcp = mcp;
    this.shared = {
      store,
      registry: createAgentToolRegistry({
        logger,
        sessionManager: this.deps.sessionManager,
        catalog,
        workspace: config.workspace,
        db,
        memory: memoryAccess(env, db, {
          changed: async (org, user) => {
            // This session drops its own copy; the person's others are told over RPC (never this one: it is busy).
            this.deps.memoryCopy?.drop();
            await notifyMemoryChange(env, db, org, user, logger, { except: store.identity().sessionId });
          },
        }),
      }),
      catalog,
      basePrompt: () => sessionBasePrompt(db),
      config: config.agent,
      createBranchSession: (mode) => this.deps.createBranch(mode),
      events,
      remoteTools: (names, base) => mcp.forTools(names, base),
      elicit,
      // The session owner's memories, whoever sends the message (an org admin acting on the session included).
      memory: ownerMemoryRecall(env, db, () => store.identity(), logger, this.deps.memoryCopy),
    };
    return this.shared;
  }

  /**
   * The mode and the base prompt from the isolate's kept copy (MODES_CACHE_MS), as every door reads them: a
   * message does not wait for a D1 round trip to learn its mode before the model is asked.
   */
  private keptReads(catalog: AgentModeCatalogService): Pick<AgentReasonerDeps, "catalog" | "basePrompt"> {
    const { env, db, store } = this.deps;
    const ttlMs = settings(env).modes.cacheMs;
    const read = (key: string) => cachedTurnReads(env.DB, db, store.identity().org, key, ttlMs);
    const kept: AgentModeCatalogService = {
      getAllModes: (signal) => catalog.getAllModes(signal),
      getMode: async (key) => (await read(key)).mode,
      getDefaultMode: (signal) => catalog.getDefaultMode(signal),
    };
    return {
      catalog: pinnedCatalog(kept, this.pin),
      basePrompt: async () => (await read(store.identity().mode)).basePrompt,
    };
  }

  /**
   * The read of the owner's memories for the session's copy, carried by its list write: when memory is on for the
   * session's mode (read as a turn reads it) and org; else none.
   */
  async memoryRead(at: string): Promise<CopyRead | null> {
    const { env, db, store, memoryCopy } = this.deps;
    if (!memoryCopy) return null;
    const owner = store.identity();
    const read = await cachedTurnReads(env.DB, db, owner.org, owner.mode, settings(env).modes.cacheMs);
    const mode = this.pin()?.snapshot ?? read.mode;
    return ownerCopyRead(env, db, owner, mode, memoryCopy, at);
  }

  /**
   * How the caller's model calls reach a model: the router (each upstream call a usage row, under `endpoint`), the
   * org's meter when budgets are on, and the logger with the caller's request on its lines.
   */
  modelAccess(
    caller: Caller | undefined,
    endpoint: "agent" | "agent_compaction" = "agent",
  ): { router: ChainRouter; meter?: TurnMeter; logger: JsonAdminLogger } {
    const { env, store, waitUntil } = this.deps;
    const logger = callLogger(this.deps.logger, caller);
    const session = () => {
      const { sessionId, mode } = store.identity();
      return { sessionId, mode, turnId: store.turn()?.turnId ?? null, modeVersion: this.modeVersion };
    };
    // The object's own leases: a promise of one object's context cannot be awaited from another's.
    const metering = { env, logger, defer: waitUntil, owner: this };
    const router = envRouter(env, store.identity().org, logger, {
      // An eval's turns (caller.eval) are metered as `eval`, apart from people's.
      onAttempt: caller
        ? turnUsageRecorder(this.deps.keepUsage, caller, session, caller.eval ? "eval" : endpoint)
        : undefined,
      onTable: (table) => this.noteKeys(table.keysOf(table.stored())),
      // One session's requests share their prefix: a route that sends prompt_cache_key keeps them on one cache.
      promptCacheKey: store.identity().sessionId,
    });
    return {
      router,
      logger,
      ...(caller && settings(env).metering.budgets ? { meter: orgTurnMeter(metering, caller) } : {}),
    };
  }

  /** The pinned mode version's snapshot, if the session has one. */
  private readonly pin = (): ModePin | null => this.deps.pin?.() ?? null;

  /** `catalog`, noting the version of the session's own mode each time the loop reads it (modeVersion). */
  private noting(catalog: AgentModeCatalogService): AgentModeCatalogService {
    return {
      getAllModes: (signal) => catalog.getAllModes(signal),
      getDefaultMode: (signal) => catalog.getDefaultMode(signal),
      getMode: async (key, signal) => {
        const mode = await catalog.getMode(key, signal);
        if (mode && key === this.deps.store.identity().mode) this.modeVersion = mode.version;
        return mode;
      },
    };
  }

  /** The keys the session's org's routes send, as the router last read them. */
  private noteKeys(keys: readonly string[]): void {
    this.orgKeys = keys;
  }

  /**
   * The redaction of a trace's content: every secret the Worker knows, and the org's keys in play (its routes' and
   * its MCP servers'); made again only when those keys change (an org's secret stored or replaced).
   */
  private redactor(): (text: string) => string {
    const keys = [...this.orgKeys, ...(this.mcp?.tokensInPlay() ?? [])];
    const id = keys.join("\u0000");
    if (!this.redact || this.redactKeys !== id) {
      this.redact = secretRedactor(this.deps.env, keys);
      this.redactKeys = id;
    }
    return this.redact;
  }

  /**
   * The mode catalog as a turn without a bookmark reads it (the compaction after a turn): its modes from the
   * isolate's kept copy (MODES_CACHE_MS), not a D1 read after every turn.
   */
  catalog(): AgentModeCatalogService {
    return this.keptReads(this.sharedDeps().catalog).catalog;
  }

  /**
   * The guardrails of the session's turns: the effective list of its mode and org (kept per isolate, as the mode
   * is), the session's vault, the classifier of moderation and prompt_injection, and the org's counters.
   */
  private guardrails(logger: JsonAdminLogger): TurnGuardrailSource | undefined {
    const { env, db, store, vault, waitUntil } = this.deps;
    if (!vault) return undefined;
    const org = store.identity().org;
    return {
      list: (mode) => effectiveGuardrails(env, db, org, mode),
      vault,
      classify: guardrailClassifier(env, db, org, logger),
      count: (decisions) => recordGuardrailDecisions(env, db, org, decisions, waitUntil),
    };
  }

  /** What records a run's steps (the timeline) and, when tracing is on, its spans under the caller's trace. */
  private recorder(caller: Caller | undefined): TurnRecorder {
    const { env, store, steps } = this.deps;
    return new TurnRecorder({
      steps,
      // The isolate's tracing outlives this request: its export warnings carry no request's fields.
      tracing: tracingFor(env),
      parent: caller?.trace,
      sessionId: store.identity().sessionId,
      mode: () => store.identity().mode,
      modeVersion: () => this.modeVersion,
      redact: (text) => this.redactor()(text),
    });
  }

  /**
   * A reasoner acting for the request's caller: its model calls count against the caller's key, its logs carry
   * the request id. Everything else is the object's, built once.
   */
  reasoner(options: ReasonerOptions = {}): AgentReasoner {
    const { env } = this.deps;
    const { caller, reads } = options;
    const { router, meter, logger } = this.modelAccess(caller);
    const budget =
      options.budget ?? (caller ? keyModelCallBudget(env.MODEL_CALL_LIMITER, caller.keyId, logger) : undefined);
    const shared = this.sharedDeps();
    const reading = reads
      ? {
          catalog: pinnedCatalog(catalogKnowing(shared.catalog, reads.mode), this.pin),
          basePrompt: () => Promise.resolve(reads.basePrompt),
        }
      : caller?.bookmarkSent
        ? { catalog: shared.catalog }
        : this.keptReads(shared.catalog);
    return new AgentReasoner({
      ...shared,
      calibration: this.deps.calibration,
      observer: this.recorder(caller),
      router,
      ...(meter ? { meter } : {}),
      ...reading,
      catalog: this.noting(reading.catalog),
      logger,
      ...(caller ? { caller: { org: caller.org, user: caller.user, keyId: caller.keyId } } : {}),
      ...(options.clientTools || options.declineElicitations
        ? {
            door: {
              clientTools: options.clientTools ?? [],
              declineElicitations: options.declineElicitations ?? false,
            },
          }
        : {}),
      ...(budget ? { budget } : {}),
      ...(options.clientTools
        ? { clientTools: { tools: options.clientTools.map(clientFunctionTool), hideModeClientTools: true } }
        : {}),
      ...(options.declineElicitations ? { elicit: undefined } : {}),
      guardrails: this.guardrails(logger),
    });
  }
}

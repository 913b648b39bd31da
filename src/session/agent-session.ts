// AgentSession: one Durable Object per agent session. It owns the session's mode, conversation, pending
// tool calls and mode history in its SQLite storage, runs the agent loop and executes server tools itself.
import { DurableObject } from "cloudflare:workers";
import { agentConfigFromEnv } from "../agent/agent-config";
import { AgentReasoner, type ApprovalDecision, type ClientToolResult, type Outcome } from "../agent/agent-reasoner";
import { type AgentExecuteResponse, type AgentToolCall, publicToolCall } from "../agent/agent-tool-call";
import type { ConversationMessage, SessionStatus } from "../agent/turn-store";
import type { ChatModel } from "../llm/chat-model";
import { DemoChatModel } from "../llm/demo-model";
import { OpenAIChatModel } from "../llm/openai-chat-model";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { JsonAdminLogger } from "../observability/admin-logger";
import { DEFAULT_SYSTEM_PROMPT_ID, getSystemPrompt } from "../prompts/system-prompt-store";
import { createAgentToolRegistry } from "../tools";
import { type AgentSessionManager, SessionModeError } from "./session-manager";
import { type ModeHistoryEntry, SessionStore } from "./session-store";

export interface SessionView {
  sessionId: string;
  mode: string;
  status: SessionStatus;
  modeHistory: ModeHistoryEntry[];
  pendingToolCalls: AgentToolCall[];
  parentSessionId: string | null;
  conversation: ConversationMessage[];
  createdAt: string;
  updatedAt: string;
}

export interface SessionInit {
  sessionId: string;
  org: string;
  user: string;
  mode: string;
  parentSessionId: string | null;
}

interface Caller {
  org: string;
  user: string;
}

const FALLBACK_BASE_PROMPT = "You are Aptix, a helpful AI agent.";

const notFound = (sessionId: string) =>
  ({ ok: false, status: 404, code: "session_not_found", message: `Session '${sessionId}' not found.` }) as const;

export class AgentSession extends DurableObject<Cloudflare.Env> implements AgentSessionManager {
  private readonly store: SessionStore;
  private readonly logger: JsonAdminLogger;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.store = new SessionStore(ctx.storage);
    this.logger = new JsonAdminLogger({ sessionId: ctx.id.toString() });
    // A turn left `running` by an object that stopped mid-turn is ended before any request is served.
    ctx.blockConcurrencyWhile(async () => {
      if (this.store.record()) this.reasoner().recoverInterruptedTurn();
    });
  }

  /** Writes the new session; called once, by the Worker or by the session it branches from. */
  async initialize(init: SessionInit): Promise<SessionView> {
    if (this.store.record()) throw new Error(`Session ${init.sessionId} already exists.`);
    this.store.create(
      { sessionId: init.sessionId, org: init.org, user: init.user, mode: init.mode },
      init.parentSessionId,
    );
    return this.view();
  }

  /** Another org's caller gets the same answer as for a session that does not exist. */
  async getSession(caller: Caller): Promise<Outcome<SessionView>> {
    return this.owned(caller) ? { ok: true, value: this.view() } : notFound(this.ctx.id.toString());
  }

  async sendMessage(caller: Caller, content: string): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    return this.reasoner().startTurn(content);
  }

  async submitApprovals(caller: Caller, decisions: ApprovalDecision[]): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    return this.reasoner().applyApprovals(decisions);
  }

  async submitToolResults(caller: Caller, results: ClientToolResult[]): Promise<Outcome<AgentExecuteResponse>> {
    if (!this.owned(caller)) return notFound(this.ctx.id.toString());
    return this.reasoner().applyToolResults(results);
  }

  /** TUL-007's SetSessionMode: checks the mode against the catalog, then writes it and its audit row together. */
  async setSessionMode(sessionId: string, mode: string, reason: string, org: string, user: string): Promise<void> {
    const record = this.store.record();
    if (!record || record.sessionId !== sessionId || record.org !== org) {
      throw new SessionModeError(`Session '${sessionId}' not found.`);
    }
    const catalog = new D1AgentModeCatalogService(this.env.DB);
    if (!(await catalog.getMode(mode))) {
      const known = (await catalog.getAllModes()).map((m) => m.key).join(", ");
      throw new SessionModeError(`Unknown mode '${mode}'. Known modes: ${known}.`);
    }
    this.store.changeMode(mode, reason, user);
  }

  private owned(caller: Caller): boolean {
    return this.store.record()?.org === caller.org;
  }

  private view(): SessionView {
    const record = this.store.record();
    if (!record) throw new Error("The session does not exist.");
    return {
      sessionId: record.sessionId,
      mode: record.mode,
      status: record.status,
      modeHistory: this.store.modeHistory(),
      pendingToolCalls: this.store.pendingToolCalls().map(publicToolCall),
      parentSessionId: record.parentSessionId,
      conversation: this.store.messages(),
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
  }

  private model(): ChatModel {
    const config = agentConfigFromEnv(this.env);
    if (!this.env.LLM_BASE_URL) return new DemoChatModel();
    return new OpenAIChatModel({
      baseUrl: this.env.LLM_BASE_URL,
      apiKey: this.env.LLM_API_KEY ?? "",
      model: this.env.LLM_MODEL,
      callTimeoutMs: config.modelCallTimeoutMs,
    });
  }

  private reasoner(): AgentReasoner {
    const catalog = new D1AgentModeCatalogService(this.env.DB);
    return new AgentReasoner({
      store: this.store,
      model: this.model(),
      registry: createAgentToolRegistry({ logger: this.logger, sessionManager: this, catalog }),
      catalog,
      basePrompt: async () =>
        (await getSystemPrompt(this.env.DB, DEFAULT_SYSTEM_PROMPT_ID))?.content ?? FALLBACK_BASE_PROMPT,
      config: agentConfigFromEnv(this.env),
      logger: this.logger,
      createBranchSession: (mode) => this.createBranch(mode),
    });
  }

  private async createBranch(mode: string): Promise<string> {
    const parent = this.store.identity();
    const id = this.env.AGENT_SESSION.newUniqueId();
    await this.env.AGENT_SESSION.get(id).initialize({
      sessionId: id.toString(),
      org: parent.org,
      user: parent.user,
      mode,
      parentSessionId: parent.sessionId,
    });
    return id.toString();
  }
}

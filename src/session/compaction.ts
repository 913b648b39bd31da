// Compaction: after a turn ends, when the history the next request would carry has passed COMPACT_AT of its budget,
// the session has the mode's model fold the older turns (and the summary before them) into a new summary, off the
// reply path. The summary has a budget of its own (SUMMARY_SHARE of the history budget, context-budgets.ts): the
// model is asked for at most that many tokens (max_tokens) and a longer answer is cut at a sentence end before it is
// stored, so the summary never grows with the session. The call takes the mode's route (failover included), fits
// its context (request-fit.ts), is reserved in the org's meter and recorded as usage rows like a turn's calls; the
// summary is stored only if what it covers is still what it replaces. A compaction that fails changes nothing (the
// oldest turns are left out, as without one) and is logged.
import type { AgentConfig } from "../agent/agent-config";
import { compactionTranscript, planCompaction } from "../agent/compaction-plan";
import { contextBudgets } from "../agent/context-budgets";
import type { TurnMeter } from "../agent/model-call-budget";
import { checkFit, type RequestFit, roomForHistory } from "../agent/request-fit";
import { summaryWithinBudget } from "../agent/summary-budget";
import type { TokenCalibration } from "../agent/token-calibration";
import { ModelError } from "../llm/chat-model";
import { deadline } from "../llm/deadline";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { compactionInstructions, compactionRequest, summaryWords } from "../prompts/compaction-prompt";
import type { ModelRouter, RouteInput } from "../routing/model-router";
import { estimateTokens } from "../token-estimate";
import type { ChatMessage } from "../wire/openai";
import type { Caller } from "./caller";
import type { SessionStore } from "./session-store";

export const COMPACTION_LOG_TAG = "[AgentSession_Compaction]";

export interface CompactionDeps {
  store: SessionStore;
  /** The agent settings (read when a compaction runs, as the loop reads them). */
  config: () => Pick<AgentConfig, "historyBudgetTokens" | "promptBudgetTokens" | "turnTimeoutMs">;
  catalog: () => AgentModeCatalogService;
  /** The caller's way to the model: the router (usage rows), the org's meter, the logger. */
  access: (caller: Caller | undefined) => {
    router: Pick<ModelRouter, "complete" | "contextTokens">;
    meter?: TurnMeter | undefined;
    logger: JsonAdminLogger;
  };
  /** The session's token estimate, calibrated per route from reported usage. */
  calibration?: TokenCalibration | undefined;
  /** Keeps the object alive until the compaction ends. */
  waitUntil: (work: Promise<unknown>) => void;
  /** The request as the model may read it: what a mask guardrail hid, as its placeholders (turn-guardrails.ts). */
  forModel?: ((messages: ChatMessage[]) => ChatMessage[]) | undefined;
}

/** Why a compaction stored nothing, for the log. */
class CompactionFailed extends Error {}

export class Compactor {
  private running: Promise<void> | null = null;

  constructor(private readonly deps: CompactionDeps) {}

  /** After a turn ends (or pauses): a compaction starts off the reply path if one is due and none runs. */
  afterTurn(caller?: Caller): void {
    if (this.running) return;
    const access = this.deps.access(caller);
    const work = this.compact(access)
      .catch((error: unknown) => this.logFailure(access.logger, error))
      .finally(() => {
        if (this.running === work) this.running = null;
      });
    this.running = work;
    this.deps.waitUntil(work);
  }

  /** Resolves when the compaction running now (if any) has ended. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async compact(access: ReturnType<CompactionDeps["access"]>): Promise<void> {
    const { store } = this.deps;
    const config = this.deps.config();
    if (!store.record()) return;
    const { router, meter, logger } = access;
    const catalog = this.deps.catalog();
    const mode = (await catalog.getMode(store.identity().mode)) ?? (await catalog.getDefaultMode());
    const route = mode.modelRoute;
    const { calibration } = this.deps;
    const budgets = contextBudgets(config, await router.contextTokens?.(route), calibration?.ratio(route) ?? 1);
    // The compaction request fits the route too: the instructions, the summary so far, the messages taken in and
    // the new summary's max_tokens.
    const basedOn = store.summary();
    const fixed = estimateTokens(compactionInstructions().length + (basedOn?.text.length ?? 0));
    const room = roomForHistory({ ...budgets, answerTokens: budgets.summaryMaxTokens }, fixed);
    const plan = planCompaction(store, budgets.historyBudgetTokens, Math.min(budgets.historyBudgetTokens, room));
    if (!plan) return;
    const request = compactionRequest(
      plan.basedOn?.text ?? null,
      compactionTranscript(plan.messages),
      summaryWords(budgets.summaryMaxTokens),
    );
    const messages = this.deps.forModel ? this.deps.forModel(request) : request;
    const fit: RequestFit = {
      route,
      budgets: { ...budgets, answerTokens: budgets.summaryMaxTokens },
      summarised: false,
      currentMessages: 1,
    };
    /** The check on the chain's route `input` names: a fallback is held to its own context, not the mode route's. */
    const fitOn = (input: RouteInput): RequestFit => {
      if (input.route === undefined || input.contextTokens === undefined || input.route === route) return fit;
      const own = contextBudgets(config, input.contextTokens, calibration?.ratio(input.route) ?? 1);
      return { ...fit, route: input.route, budgets: { ...own, answerTokens: budgets.summaryMaxTokens } };
    };
    let estimated = 0;
    const admission = meter ? await meter.reserve(JSON.stringify(messages).length, route) : null;
    if (admission && !admission.ok) throw new CompactionFailed(`The org's budget refused it: ${admission.message}`);
    const reservation = admission?.reservation;
    const timer = deadline(config.turnTimeoutMs);
    let text: string;
    try {
      const { response, route: servedBy } = await router.complete(route, {
        request: async (_format, input) => {
          // The transcript is summarised once and never sent again: nothing for the prompt cache to keep.
          const sent = { messages, maxTokens: budgets.summaryMaxTokens, promptCache: false as const };
          estimated = await checkFit(fitOn(input), sent, input.route ?? route, input.countTokens, calibration);
          return sent;
        },
        signal: timer.signal,
      });
      if (response.usage) calibration?.observe(servedBy.name, estimated, response.usage.promptTokens);
      reservation?.settle({
        route: servedBy.name,
        usage: response.usage ?? null,
        answerChars: response.content?.length ?? 0,
      });
      // Never stored longer than its budget, whatever the model wrote.
      text = summaryWithinBudget((response.content ?? "").trim(), budgets.summaryBudgetTokens);
    } catch (error) {
      reservation?.settle(null);
      throw error;
    } finally {
      timer.clear();
    }
    if (!text) throw new CompactionFailed("The model answered with no summary.");
    const saved = store.saveSummary({ fromSeq: plan.fromSeq, toSeq: plan.toSeq, text }, plan.basedOn);
    if (!saved) throw new CompactionFailed("Another summary was stored meanwhile; this one was dropped.");
    logger.addCustomEvent("Message", COMPACTION_LOG_TAG, "The earlier conversation was summarised.", [
      ["SessionId", store.identity().sessionId],
      ["FromSeq", String(plan.fromSeq)],
      ["ToSeq", String(plan.toSeq)],
    ]);
  }

  private logFailure(logger: JsonAdminLogger, error: unknown): void {
    const sessionId = this.deps.store.record()?.sessionId ?? "";
    const detail =
      error instanceof ModelError
        ? `${error.code}: ${error.detail}`
        : error instanceof CompactionFailed
          ? error.message
          : null;
    if (detail === null) {
      logger.addException(`${COMPACTION_LOG_TAG}__Exception`, error, [["SessionId", sessionId]]);
      return;
    }
    logger.addCustomEvent(
      "Warning",
      COMPACTION_LOG_TAG,
      `The earlier conversation could not be summarised; its oldest turns are left out instead. ${detail}`,
      [["SessionId", sessionId]],
    );
  }
}

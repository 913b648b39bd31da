// The guardrails on one request's run of a turn: which of the mode's effective guardrails watch each point (the
// person's message, the model's answer, a tool call's arguments, a tool's result), the checks themselves, and the
// session's mask vault, through which the model only ever reads placeholders for what a `mask` guardrail hid. The
// checks and the vault are the engine's (src/guardrails/); this file only places them on the loop.

import {
  type CheckResult,
  checkText,
  type GuardrailClassifier,
  type GuardrailDecision,
  guardrailRefusal,
  type MaskVault,
} from "../guardrails/guardrail-check";
import type { Guardrail, GuardrailPoint } from "../guardrails/guardrail-config";
import type { AgentMode } from "../modes/agent-mode";
import type { TurnObserver } from "../observability/turn-observer";
import type { ChatMessage } from "../wire/openai";
import type { TurnError } from "../wire/turn";
import { maskKnownValues } from "./mask-known-values";

/** The session's mask vault, read from its storage once and written back when a check adds to it. */
export interface VaultKeeper {
  vault(): MaskVault;
  /** Writes the vault if it changed since it was read or last written. */
  save(): void;
}

/** What the session object gives the loop: the effective lists, the vault, the classifier, the counters. */
export interface TurnGuardrailSource {
  /** The mode's effective list (the org's entries and the mode's own), kept per isolate as the mode is. */
  list(mode: AgentMode): Promise<readonly Guardrail[]>;
  vault: VaultKeeper;
  classify?: GuardrailClassifier | undefined;
  /** Counts the decisions per guardrail (off the reply path). */
  count(decisions: readonly GuardrailDecision[]): void;
}

/** A checked text: what to pass on, the block when one fired, and every decision (recorded unless asked not to). */
export interface Checked {
  text: string;
  blocked: GuardrailDecision | null;
  decisions: GuardrailDecision[];
}

/** The error a turn stops with when a guardrail blocks its answer, or a result withheld from the model. */
export function blockedError(decision: GuardrailDecision): TurnError {
  return { code: "guardrail_blocked", message: guardrailRefusal(decision).message };
}

export class TurnGuardrails {
  private readonly lists = new WeakMap<AgentMode, Promise<readonly Guardrail[]>>();

  constructor(
    private readonly source: TurnGuardrailSource,
    /** The session's mode as the request reads it (kept for the request by withStepCache). */
    private readonly mode: () => Promise<AgentMode>,
    private readonly observer: () => TurnObserver | undefined,
  ) {}

  private async list(): Promise<readonly Guardrail[]> {
    const mode = await this.mode();
    let list = this.lists.get(mode);
    if (!list) {
      list = this.source.list(mode);
      this.lists.set(mode, list);
    }
    return list;
  }

  /** The guardrails that watch `point`. */
  async at(point: GuardrailPoint): Promise<Guardrail[]> {
    return (await this.list()).filter((g) => g.points.includes(point));
  }

  /**
   * Whether the model's text is held until it is checked (an `output` guardrail that blocks or redacts): a
   * stream then gets a step's text in one piece, once checked, instead of as the model writes it.
   */
  async holdsOutput(): Promise<boolean> {
    return (await this.at("output")).some((g) => g.action === "block" || g.action === "redact");
  }

  /**
   * Checks `text` at `point`; with no guardrail there, the text as it is. The decisions are recorded here unless
   * `record` is false (the person's message: its turn's timeline does not exist yet, so the caller records them).
   */
  async check(point: GuardrailPoint, text: string, record = true): Promise<Checked> {
    const guardrails = await this.at(point);
    if (guardrails.length === 0) return { text, blocked: null, decisions: [] };
    const vault = this.source.vault.vault();
    const result: CheckResult = await checkText(guardrails, point, text, {
      vault,
      ...(this.source.classify ? { classify: this.source.classify } : {}),
    });
    // A mask adds to the vault: written now, so a later turn (or a restarted object) restores the same placeholders.
    this.source.vault.save();
    if (record) this.record(result.decisions);
    return { text: result.text, blocked: result.blocked, decisions: result.decisions };
  }

  /** The decisions on the turn's timeline and trace (the observer), and in the org's counters. */
  record(decisions: readonly GuardrailDecision[]): void {
    if (decisions.length === 0) return;
    const observer = this.observer();
    for (const decision of decisions) observer?.guardrail?.(decision);
    this.source.count(decisions);
  }

  /** What the person sees of text that may hold the vault's placeholders: the values back in place. */
  restore(text: string): string {
    return this.hasMasks() ? this.source.vault.vault().restore(text) : text;
  }

  /** A stream's text as the person sees it: placeholders restored, a possibly cut one held back. */
  restoreStream(delta: string): string {
    return this.hasMasks() ? this.source.vault.vault().restoreStream(delta) : delta;
  }

  /** What restoreStream held back, at the end of a model call's stream. */
  flushStream(): string {
    return this.hasMasks() ? this.source.vault.vault().flush() : "";
  }

  /**
   * The request's messages as the model reads them: every value the vault hides replaced by its placeholder
   * (the conversation stores what the person wrote and saw; the model never reads a masked value).
   */
  forModel(messages: ChatMessage[]): ChatMessage[] {
    return maskedForModel(this.source.vault.vault(), messages);
  }

  private hasMasks(): boolean {
    return this.source.vault.vault().size > 0;
  }
}

/** `messages` with every value `vault` hides replaced by its placeholder (the system prompt is ours: left as it is). */
export function maskedForModel(vault: MaskVault, messages: ChatMessage[]): ChatMessage[] {
  if (vault.size === 0) return messages;
  const values = vault.toJSON();
  return messages.map((message) => maskMessage(message, values));
}

function maskMessage(message: ChatMessage, values: Record<string, string>): ChatMessage {
  const mask = (text: string) => maskKnownValues(text, values);
  switch (message.role) {
    case "system":
      return message;
    case "user":
      return {
        ...message,
        content:
          typeof message.content === "string"
            ? mask(message.content)
            : message.content.map((part) => (part.type === "text" ? { ...part, text: mask(part.text) } : part)),
      };
    case "assistant":
      return {
        ...message,
        content: message.content === null ? null : mask(message.content),
        ...(message.tool_calls
          ? {
              tool_calls: message.tool_calls.map((c) => ({
                ...c,
                function: { ...c.function, arguments: mask(c.function.arguments) },
              })),
            }
          : {}),
      };
    case "tool":
      return { ...message, content: mask(message.content) };
  }
}

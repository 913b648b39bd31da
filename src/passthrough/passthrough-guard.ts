// The org's guardrails on the passthrough (issue 45): when an org turns `passthrough` on, its `input` and `output`
// guardrails apply to /v1/chat/completions, /v1/responses and /v1/messages. The user's texts are checked before any
// upstream call (a block refuses in the door's own error shape and sends nothing; a redact or mask sends the
// placeholders), and the answer before the client reads it (JSON here, streams in guardrail-stream.ts), with the
// request's masked values restored. Every decision is counted for the admin page and put on the request's span,
// never the text it matched. An org without passthrough guardrails pays one read kept per isolate, nothing more.
import { type Attributes, trace } from "@opentelemetry/api";
import type { ApiError } from "../errors";
import {
  checkText,
  type GuardrailClassifier,
  type GuardrailDecision,
  guardrailClassifier,
  guardrailRefusal,
  MaskVault,
} from "../guardrails/guardrail-check";
import type { Guardrail, GuardrailPoint } from "../guardrails/guardrail-config";
import { recordGuardrailDecisions } from "../guardrails/guardrail-counts";
import { effectiveGuardrails } from "../guardrails/guardrail-policy";
import type { AppContext } from "../http";
import { settings } from "../settings";
import { isEventStream } from "./answer-as-message";
import { guardedEventStream } from "./guardrail-stream";
import { answerTexts, type GuardedDoor, guardedDoor, isRecord, mapStrings, userTexts } from "./guardrail-texts";
import type { MeteredRequest } from "./metered-request";
import { jsonObjectOf, type PassthroughRequest } from "./request-body";
import { streamFramesOf } from "./stream-frames";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A decision as the span event `guardrail` carries it (the contract's attributes): never the matched text. */
export function guardrailEventAttributes(decision: GuardrailDecision): Attributes {
  return {
    "aptix.guardrail.name": decision.guardrail,
    "aptix.guardrail.point": decision.point,
    "aptix.guardrail.action": decision.action,
    "aptix.guardrail.found": decision.found.join(","),
  };
}

export class PassthroughGuard {
  /** The placeholders `mask` put in this request's texts, restored in its answer. */
  private readonly vault = MaskVault.from({});
  private readonly decisions: GuardrailDecision[] = [];
  private classifier: GuardrailClassifier | undefined;
  private metered: MeteredRequest | null = null;
  private finished = false;
  /** The JSON answer went through the checks already (jsonAnswer): output() passes it on as it is. */
  private answered = false;
  private resolveSettled: () => void = () => {};
  /** Settles when every check of the request is done (a stream's at its end): its span waits for it. */
  readonly settled = new Promise<void>((resolve) => {
    this.resolveSettled = resolve;
  });

  private constructor(
    private readonly c: AppContext,
    private readonly door: GuardedDoor,
    private readonly inputs: readonly Guardrail[],
    private readonly outputs: readonly Guardrail[],
  ) {}

  /**
   * The guard of a request, or null when none of the org's guardrails applies to it: its path is not one of the
   * three doors, or the org has no passthrough guardrail on `input` or `output`.
   */
  static async of(c: AppContext, path: string, request: PassthroughRequest | null): Promise<PassthroughGuard | null> {
    const door = request ? guardedDoor(request.wire, path) : null;
    if (!door) return null;
    const list = await effectiveGuardrails(c.env, c.env.DB, c.get("principal").org, null);
    if (list.length === 0) return null;
    const on = (point: GuardrailPoint) => list.filter((guardrail) => guardrail.points.includes(point));
    // count_tokens generates nothing: its text is checked before it leaves, there is no answer to check.
    const outputs = path === "/messages/count_tokens" ? [] : on("output");
    const inputs = on("input");
    if (inputs.length === 0 && outputs.length === 0) return null;
    return new PassthroughGuard(c, door, inputs, outputs);
  }

  private get classify(): GuardrailClassifier {
    this.classifier ??= guardrailClassifier(
      this.c.env,
      this.c.env.DB,
      this.c.get("principal").org,
      this.c.get("logger"),
    );
    return this.classifier;
  }

  private check(guardrails: readonly Guardrail[], point: GuardrailPoint, text: string) {
    return checkText(guardrails, point, text, { vault: this.vault, classify: this.classify });
  }

  /** The request's span, once it has one: the decisions so far go on it, and it ends after the last check. */
  attach(metered: MeteredRequest | null): void {
    if (!metered) return;
    this.metered = metered;
    metered.holdSpanUntil(this.settled);
    for (const decision of this.decisions) metered.spanEvent("guardrail", guardrailEventAttributes(decision));
  }

  private note(decisions: readonly GuardrailDecision[]): void {
    for (const decision of decisions) {
      this.decisions.push(decision);
      this.metered?.spanEvent("guardrail", guardrailEventAttributes(decision));
    }
  }

  /**
   * A block: recorded now (an input's, with the decisions before it, on the server span: the request has no span of
   * its own yet), answered as a refusal.
   */
  private refusal(decision: GuardrailDecision, param: string | null = null): ApiError {
    if (!this.metered) {
      const span = trace.getActiveSpan();
      for (const made of this.decisions) span?.addEvent("guardrail", guardrailEventAttributes(made));
    }
    this.done();
    return guardrailRefusal(decision, param);
  }

  /** Every check is done: the decisions are counted (off the reply's path), the span may end. Once. */
  done(): void {
    if (this.finished) return;
    this.finished = true;
    const { c } = this;
    recordGuardrailDecisions(
      c.env,
      c.env.DB,
      c.get("principal").org,
      this.decisions,
      (work: Promise<unknown>) => c.executionCtx.waitUntil(work),
      c.get("logger"),
    );
    this.resolveSettled();
  }

  /**
   * The request with its user texts checked: a block throws the refusal (nothing goes upstream); a redact or mask
   * changes the texts, and only then is the body written again (with every other field as the client wrote it).
   */
  async input(request: PassthroughRequest): Promise<PassthroughRequest> {
    if (this.inputs.length === 0) return request;
    const body = jsonObjectOf(request.bytes);
    if (!isRecord(body)) return request;
    let changed = false;
    for (const slot of userTexts(this.door, body)) {
      const result = await this.check(this.inputs, "input", slot.text);
      this.note(result.decisions);
      // The client's own field is named: the text it blocked is one the client sent.
      if (result.blocked) throw this.refusal(result.blocked, slot.path);
      if (result.text !== slot.text) {
        slot.set(result.text);
        changed = true;
      }
    }
    if (!changed) return request;
    const encoded = encoder.encode(JSON.stringify(body));
    const bytes = new ArrayBuffer(encoded.byteLength);
    new Uint8Array(bytes).set(encoded);
    // The Messages request the route read is read again from the new bytes when it crosses to chat completions.
    const { messages: _read, ...rest } = request;
    return { ...rest, bytes };
  }

  /**
   * A whole JSON answer on the client's wire, from the bytes the relay read (its body is not read again), checked and
   * restored: the answer output() then passes on.
   */
  async jsonAnswer(answer: Response, bytes: ArrayBuffer | Uint8Array): Promise<Response> {
    this.answered = true;
    const masked = this.vault.size > 0;
    if (this.outputs.length === 0 && !masked) return answer;
    const headers = new Headers(answer.headers);
    headers.delete("content-length");
    return this.jsonOutput(decoder.decode(bytes), answer.status, headers, masked);
  }

  /** The answer in the client's wire, checked and restored; an error answer is left as it is. */
  async output(answer: Response): Promise<Response> {
    const masked = this.vault.size > 0;
    if (this.answered || !answer.ok || (this.outputs.length === 0 && !masked)) {
      this.done();
      return answer;
    }
    const headers = new Headers(answer.headers);
    headers.delete("content-length");
    if (isEventStream(answer) && answer.body) {
      const body = guardedEventStream(answer.body, {
        door: this.door,
        hold: this.outputs.some((guardrail) => guardrail.action === "block" || guardrail.action === "redact"),
        vault: masked ? this.vault : null,
        channelVault: masked ? () => MaskVault.from(this.vault.toJSON()) : null,
        check: (texts) => this.checkTexts(texts),
        errorFrame: (error) =>
          streamFramesOf(this.door === "messages" ? "anthropic" : "openai").error(error.toBody(), error.status),
        keepaliveMs: settings(this.c.env).passthrough.keepaliveMs,
        done: () => this.done(),
      });
      return new Response(body, { status: answer.status, headers });
    }
    try {
      return await this.jsonOutput(await answer.text(), answer.status, headers, masked);
    } finally {
      this.done();
    }
  }

  private async jsonOutput(text: string, status: number, headers: Headers, masked: boolean): Promise<Response> {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return new Response(text, { status, headers });
    }
    if (!isRecord(value)) return new Response(text, { status, headers });
    let changed = false;
    for (const slot of answerTexts(this.door, value)) {
      const result =
        this.outputs.length > 0
          ? await this.check(this.outputs, "output", slot.text)
          : { text: slot.text, decisions: [], blocked: null };
      this.note(result.decisions);
      if (result.blocked) throw this.refusal(result.blocked);
      const restored = this.vault.restore(result.text);
      if (restored !== slot.text) {
        slot.set(restored);
        changed = true;
      }
    }
    // Placeholders the model put elsewhere (a tool call's arguments) are the client's values too.
    const out = masked ? mapStrings(value, (s) => this.vault.restore(s)) : value;
    const body = changed || masked ? JSON.stringify(out) : text;
    return new Response(body, { status, headers });
  }

  /** A stream's assembled texts through the `output` checks: the first block, or each text to send (restored). */
  private async checkTexts(
    texts: ReadonlyMap<string, string>,
  ): Promise<{ blocked: ApiError | null; texts: ReadonlyMap<string, string> }> {
    const checked = new Map<string, string>();
    for (const [channel, text] of texts) {
      if (this.outputs.length === 0) {
        checked.set(channel, this.vault.restore(text));
        continue;
      }
      const result = await this.check(this.outputs, "output", text);
      this.note(result.decisions);
      if (result.blocked) return { blocked: guardrailRefusal(result.blocked), texts: checked };
      checked.set(channel, this.vault.restore(result.text));
    }
    return { blocked: null, texts: checked };
  }
}

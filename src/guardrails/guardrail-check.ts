// Checking one text at one point against a list of guardrails: each guardrail that checks the point, in the list's
// order, sees the text as the ones before it left it; a `block` ends the check (the caller refuses with
// guardrailRefusal), `redact` and `mask` replace what was found with placeholders, `flag` only records. What is
// recorded (a decision) names the guardrail and the kinds of thing found, never the text itself.
import { ApiError } from "../errors";
import { type Refusal, refuse } from "../refusal";
import { estimateTokens } from "../token-estimate";
import { detectDenied } from "./detect-deny";
import { detectPii } from "./detect-pii";
import { detectSecrets } from "./detect-secrets";
import { type GuardrailClassifier, offlineModeration } from "./guardrail-classifier";
import {
  type Guardrail,
  type GuardrailAction,
  type GuardrailKind,
  type GuardrailPoint,
  PII_ENTITIES,
  SECRET_PROVIDERS,
} from "./guardrail-config";
import { type Span, settleSpans } from "./guardrail-span";
import { blockedMessage } from "./guardrail-wording";
import { MaskVault } from "./mask-vault";
import { promptInjectionHeuristic } from "./prompt-injection-heuristic";

export { type Classification, type GuardrailClassifier, guardrailClassifier } from "./guardrail-classifier";
export { MaskVault } from "./mask-vault";

/** What is recorded of a guardrail that fired: never the matched text. */
export interface GuardrailDecision {
  guardrail: string;
  kind: GuardrailKind;
  point: GuardrailPoint;
  action: GuardrailAction;
  /** What was found: pii entities (`email`), secrets' providers (`openai`), categories (`S1`), `deny`, `max_tokens`. */
  found: string[];
  /** For moderation and prompt_injection: which classifier decided (`offline-stand-in`, `heuristic`, ...). */
  classifier?: string;
}

export interface CheckResult {
  /** The text to pass on (redacted or masked; unchanged by a flag). */
  text: string;
  /** The first block that fired: the caller refuses. */
  blocked: GuardrailDecision | null;
  /** Every guardrail that fired, in order (flag, redact, mask, block). */
  decisions: GuardrailDecision[];
}

export interface CheckContext {
  /** The session's placeholders (a mask keeps its value here to be restored); without one, masks are not restorable. */
  vault?: MaskVault;
  /** The classifier of moderation and prompt_injection; without one, the offline stand-in and the heuristic. */
  classify?: GuardrailClassifier;
  now?: number;
}

const offlineClassifier: GuardrailClassifier = async (kind, text) =>
  kind === "moderation" ? offlineModeration(text) : promptInjectionHeuristic(text);

/** The spans a span-finding guardrail finds in `text`, settled (no overlaps). */
function findSpans(guardrail: Guardrail, text: string): Span[] {
  switch (guardrail.kind) {
    case "pii":
      return settleSpans(detectPii(text, guardrail.entities ?? PII_ENTITIES));
    case "secrets":
      return settleSpans(detectSecrets(text, guardrail.providers ?? SECRET_PROVIDERS));
    case "deny":
      return settleSpans(detectDenied(text, guardrail));
    default:
      return [];
  }
}

/** `text` with each span replaced by what `replace` gives for it. */
function replaceSpans(text: string, spans: readonly Span[], replace: (span: Span, value: string) => string): string {
  let out = "";
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start) + replace(span, text.slice(span.start, span.end));
    at = span.end;
  }
  return out + text.slice(at);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** What a classifier-backed guardrail found, or null when it did not fire. */
async function classified(
  guardrail: Guardrail,
  text: string,
  classify: GuardrailClassifier,
): Promise<{ found: string[]; classifier: string } | null> {
  if (guardrail.kind !== "moderation" && guardrail.kind !== "prompt_injection") return null;
  const answer = await classify(guardrail.kind, text, guardrail.route ?? "");
  if (!answer.flagged) return null;
  const wanted = guardrail.kind === "moderation" ? guardrail.categories : undefined;
  const categories = wanted ? answer.categories.filter((c) => wanted.includes(c)) : answer.categories;
  // A verdict in categories the guardrail does not watch is not its to act on.
  if (wanted && categories.length === 0) return null;
  return { found: categories.length > 0 ? unique(categories) : [guardrail.kind], classifier: answer.classifier };
}

export async function checkText(
  guardrails: readonly Guardrail[],
  point: GuardrailPoint,
  text: string,
  context: CheckContext = {},
): Promise<CheckResult> {
  const decisions: GuardrailDecision[] = [];
  let current = text;
  let vault = context.vault;
  for (const guardrail of guardrails) {
    if (!guardrail.points.includes(point)) continue;
    const decision = (found: string[], extra: { classifier?: string } = {}): GuardrailDecision => ({
      guardrail: guardrail.name,
      kind: guardrail.kind,
      point,
      action: guardrail.action,
      found,
      ...extra,
    });
    let fired: GuardrailDecision | null = null;
    if (guardrail.kind === "max_tokens") {
      if (estimateTokens(current) > (guardrail.maxTokens ?? Number.POSITIVE_INFINITY)) fired = decision(["max_tokens"]);
    } else if (guardrail.kind === "moderation" || guardrail.kind === "prompt_injection") {
      const verdict = await classified(guardrail, current, context.classify ?? offlineClassifier);
      if (verdict) fired = decision(verdict.found, { classifier: verdict.classifier });
    } else {
      const spans = findSpans(guardrail, current);
      if (spans.length > 0) {
        fired = decision(unique(spans.map((span) => span.type)));
        if (guardrail.action === "redact" || guardrail.action === "mask") {
          vault ??= new MaskVault();
          const into = vault;
          const redacted = new Map<string, string>();
          current = replaceSpans(current, spans, (span, value) => {
            if (guardrail.action === "mask") return into.mask(span.type, value);
            const key = `${span.type}\u0000${value}`;
            const placeholder = redacted.get(key) ?? into.redact(span.type);
            redacted.set(key, placeholder);
            return placeholder;
          });
        }
      }
    }
    if (!fired) continue;
    decisions.push(fired);
    if (guardrail.action === "block") return { text: current, blocked: fired, decisions };
  }
  return { text: current, blocked: null, decisions };
}

/** The refusal of a blocked text, for domain code (the turn): `guardrail_blocked`, in plain words. */
export function guardrailBlocked(decision: GuardrailDecision, param: string | null = null): Refusal {
  return refuse("guardrail_blocked", blockedMessage(decision), { param });
}

/**
 * The error of a blocked text, for a route: 400 `guardrail_blocked`, naming the guardrail and what it found, and in
 * `param` the field of the request that held the text when it is one the client sent.
 */
export function guardrailRefusal(decision: GuardrailDecision, param: string | null = null): ApiError {
  return ApiError.from(guardrailBlocked(decision, param));
}

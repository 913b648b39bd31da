// What a guardrail is, as an admin writes it (on a mode, or as the org's default): its kind, the points it checks,
// its action and its kind's options; and the one parsing of a list, every entry checked, an error naming the entry
// and the field (`guardrails[1].patterns[0]`). Everyone reads guardrails through this module (docs/guardrails.md).
import { z } from "zod";
import { KEY_NAME_PATTERN } from "../key-name";
import { type Outcome, refuse } from "../refusal";

export const GUARDRAIL_KINDS = ["pii", "secrets", "moderation", "prompt_injection", "deny", "max_tokens"] as const;
export const GUARDRAIL_POINTS = ["input", "output", "tool_call", "tool_result"] as const;
export const GUARDRAIL_ACTIONS = ["block", "redact", "mask", "flag"] as const;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number];
export type GuardrailPoint = (typeof GUARDRAIL_POINTS)[number];
export type GuardrailAction = (typeof GUARDRAIL_ACTIONS)[number];

/** The personal data `pii` finds (its `entities` option). */
export const PII_ENTITIES = ["email", "phone", "card", "iban", "national_id", "ip"] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];
/** The credentials `secrets` finds (its `providers` option). */
export const SECRET_PROVIDERS = [
  "openai",
  "anthropic",
  "aws",
  "github",
  "gitlab",
  "slack",
  "stripe",
  "google",
  "private_key",
  "jwt",
  "aptix",
] as const;
export type SecretProvider = (typeof SECRET_PROVIDERS)[number];
/** Llama Guard 3's hazard categories (the `categories` option of `moderation`). */
export const MODERATION_CATEGORIES = Array.from({ length: 14 }, (_, i) => `S${i + 1}`) as readonly string[];

/** The most guardrails one list holds (a mode's, or an org's). */
export const MAX_GUARDRAILS = 32;
/** The most words, and regexes, one `deny` guardrail lists. */
export const MAX_DENY_WORDS = 500;
export const MAX_DENY_PATTERNS = 50;
/** The longest word and the longest regex a `deny` guardrail takes (a long regex is where backtracking hides). */
export const MAX_DENY_WORD_CHARS = 100;
export const MAX_PATTERN_CHARS = 200;

/** The kinds whose detectors find spans of text (so `redact` and `mask` can replace them). */
const SPAN_KINDS: ReadonlySet<GuardrailKind> = new Set(["pii", "secrets", "deny"]);
/** Where text goes to the model: the only points `mask` means something at. */
const MASK_POINTS: ReadonlySet<GuardrailPoint> = new Set(["input", "tool_result"]);
/** Each option and the one kind it belongs to. */
const OPTION_KIND = {
  entities: ["pii"],
  providers: ["secrets"],
  words: ["deny"],
  patterns: ["deny"],
  maxTokens: ["max_tokens"],
  route: ["moderation", "prompt_injection"],
  categories: ["moderation"],
} as const satisfies Record<string, readonly GuardrailKind[]>;

function noRepeats<T>(list: readonly T[]): boolean {
  return new Set(list).size === list.length;
}

/** One entry as an admin writes it: strict (an unknown key is refused), each option only on its kind. */
export const GuardrailSpec = z
  .strictObject({
    name: z
      .string()
      .regex(KEY_NAME_PATTERN, "must be 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter")
      .optional(),
    kind: z.enum(GUARDRAIL_KINDS),
    points: z
      .array(z.enum(GUARDRAIL_POINTS))
      .min(1, "must name at least one point")
      .refine(noRepeats, "must not name a point twice"),
    action: z.enum(GUARDRAIL_ACTIONS),
    entities: z.array(z.enum(PII_ENTITIES)).min(1).refine(noRepeats, "must not name an entity twice").optional(),
    providers: z.array(z.enum(SECRET_PROVIDERS)).min(1).refine(noRepeats, "must not name a provider twice").optional(),
    words: z
      .array(z.string().trim().min(1, "must not be empty").max(MAX_DENY_WORD_CHARS))
      .max(MAX_DENY_WORDS)
      .optional(),
    patterns: z
      .array(
        z
          .string()
          .min(1, "must not be empty")
          .max(MAX_PATTERN_CHARS, `must be at most ${MAX_PATTERN_CHARS} characters`),
      )
      .max(MAX_DENY_PATTERNS)
      .optional(),
    maxTokens: z.number().int().min(1).max(10_000_000).optional(),
    route: z.string().regex(KEY_NAME_PATTERN, "must be a model route's name").optional(),
    categories: z
      .array(z.enum(MODERATION_CATEGORIES as [string, ...string[]]))
      .min(1)
      .refine(noRepeats, "must not name a category twice")
      .optional(),
  })
  .meta({ id: "Guardrail", description: "A check at input, output, tool_call or tool_result (docs/guardrails.md)." });
export type GuardrailSpec = z.infer<typeof GuardrailSpec>;
/** An entry after defaults: its name always set. */
export type Guardrail = Required<Pick<GuardrailSpec, "name">> & GuardrailSpec;

/** A list as it is stored (written through parseGuardrails, so only its shape is checked on the way back). */
export const StoredGuardrails = z.array(GuardrailSpec.extend({ name: z.string() }));

/**
 * A quantifier applied to a group that itself holds a quantifier (`(a+)+`, `(\w*)*`, `(x+){2,}`): the shape of
 * catastrophic backtracking. Refused when the list is written, so a check never meets one.
 */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)[+*{]/;

/** Why `pattern` is not taken, or null when it compiles and is safe to run. */
export function patternProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, "iu");
  } catch (error) {
    return `is not a valid regular expression (${error instanceof Error ? error.message : String(error)})`;
  }
  if (NESTED_QUANTIFIER.test(pattern)) {
    return "repeats a group that itself repeats (such as (a+)+), which can take exponential time: write it without the nesting";
  }
  return null;
}

interface Problem {
  at: (string | number)[];
  message: string;
}

/** The checks across fields: which options and actions a kind takes, where `mask` applies, bad regexes. */
function ruleProblem(spec: GuardrailSpec): Problem | null {
  for (const [option, kinds] of Object.entries(OPTION_KIND)) {
    if (spec[option as keyof typeof OPTION_KIND] !== undefined && !(kinds as readonly string[]).includes(spec.kind)) {
      return { at: [option], message: `is an option of ${kinds.join(" and ")} guardrails, not of ${spec.kind}` };
    }
  }
  if ((spec.action === "redact" || spec.action === "mask") && !SPAN_KINDS.has(spec.kind)) {
    return {
      at: ["action"],
      message: `${spec.action} needs a kind that finds text to replace (pii, secrets or deny); ${spec.kind} takes block or flag`,
    };
  }
  if (spec.action === "mask") {
    const index = spec.points.findIndex((point) => !MASK_POINTS.has(point));
    if (index >= 0)
      return { at: ["points", index], message: "mask hides a value from the model: points input and tool_result" };
  }
  if (spec.kind === "max_tokens" && spec.maxTokens === undefined) {
    return { at: ["maxTokens"], message: "is required for a max_tokens guardrail" };
  }
  if (spec.kind === "deny" && (spec.words?.length ?? 0) + (spec.patterns?.length ?? 0) === 0) {
    return { at: ["words"], message: "a deny guardrail needs words or patterns (at least one)" };
  }
  for (const [index, pattern] of (spec.patterns ?? []).entries()) {
    const problem = patternProblem(pattern);
    if (problem) return { at: ["patterns", index], message: problem };
  }
  return null;
}

/** `guardrails[1].patterns[0]` from the list's name and a path inside it. */
function pathOf(param: string, at: readonly (string | number | symbol)[]): string {
  return at.reduce<string>(
    (out, part) => (typeof part === "number" ? `${out}[${part}]` : `${out}.${String(part)}`),
    param,
  );
}

function invalid(param: string, at: readonly (string | number | symbol)[], message: string) {
  const path = pathOf(param, at);
  return refuse("invalid_guardrail", `Invalid guardrail: '${path}' ${message}.`, { param: path });
}

/**
 * An admin's list, every entry checked: a default name for each unnamed one (its kind, then `pii_2`, `pii_3`...),
 * no name twice. A refusal `invalid_guardrail` names the entry and field at fault (`param`: the path under `param`).
 */
export function parseGuardrails(value: unknown, param: string): Outcome<Guardrail[]> {
  if (!Array.isArray(value)) return invalid(param, [], "must be a list of guardrails");
  if (value.length > MAX_GUARDRAILS) return invalid(param, [], `must hold at most ${MAX_GUARDRAILS} guardrails`);
  const specs: GuardrailSpec[] = [];
  for (const [index, entry] of value.entries()) {
    const parsed = GuardrailSpec.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      if (issue?.code === "unrecognized_keys") {
        return invalid(param, [index, ...issue.path, issue.keys[0] ?? ""], "is not a known field");
      }
      return invalid(param, [index, ...(issue?.path ?? [])], (issue?.message ?? "is invalid").replace(/\.$/, ""));
    }
    const problem = ruleProblem(parsed.data);
    if (problem) return invalid(param, [index, ...problem.at], problem.message);
    specs.push(parsed.data);
  }
  const named = new Set<string>();
  for (const [index, spec] of specs.entries()) {
    if (spec.name === undefined) continue;
    if (named.has(spec.name)) return invalid(param, [index, "name"], `names a guardrail already in the list`);
    named.add(spec.name);
  }
  return {
    ok: true,
    value: specs.map((spec) => {
      if (spec.name !== undefined) return { ...spec, name: spec.name };
      let name: string = spec.kind;
      for (let n = 2; named.has(name); n++) name = `${spec.kind}_${n}`;
      named.add(name);
      return { name, ...spec };
    }),
  };
}

// An eval dataset: JSONL, one case a line (issue 45). Each line is parsed with the one zod schema below, and a bad
// line is named with its number and the field at fault (`line 3: expect.regex: not a valid regular expression`), so
// whoever wrote the file finds it at once. Runs in Node (the CLI) and in the Worker (server-side runs) alike.
import { z } from "zod";

/** One text or several (each must hold): `contains` and `not_contains`. */
const Texts = z.union(
  [z.string().min(1, "must not be empty"), z.array(z.string().min(1, "must not be empty")).min(1)],
  {
    error: "must be a string or an array of strings",
  },
);

const Regex = z.string().refine(
  (source) => {
    try {
      new RegExp(source, "u");
      return true;
    } catch {
      return false;
    }
  },
  { error: "not a valid regular expression" },
);

export const EvalExpectations = z.strictObject({
  contains: Texts.optional(),
  not_contains: Texts.optional(),
  regex: Regex.optional(),
  tool_called: z
    .strictObject({
      name: z.string().min(1, "must not be empty"),
      /** A subset: every key given must be in the call's arguments with an equal value (deeply). */
      arguments: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  /** The last answer, parsed as JSON (a fenced ```json block is unwrapped), must fit this JSON schema. */
  json_schema: z.record(z.string(), z.unknown()).optional(),
  /** At most this many model steps over all the case's turns. */
  max_steps: z.number().int().positive().optional(),
  /** At most this many tokens (as the model reported them) over all the case's turns. */
  max_tokens: z.number().int().positive().optional(),
  judge: z
    .strictObject({
      rubric: z.string().min(1, "must not be empty"),
      /** The model route the judge runs on; the deployment's default route without one. */
      route: z.string().min(1).optional(),
      min_score: z.number().min(0).max(1).optional(),
    })
    .optional(),
});
export type EvalExpectations = z.infer<typeof EvalExpectations>;

export const EvalCase = z.strictObject({
  name: z.string().min(1, "must not be empty").max(200),
  messages: z
    .array(z.strictObject({ role: z.literal("user", { error: "must be 'user'" }), content: z.string().min(1) }))
    .min(1, "must hold at least one user message"),
  expect: EvalExpectations,
  /** How a call that waits for approval is answered: all, none (the default), or per tool name. */
  approve: z.union([z.boolean(), z.record(z.string(), z.boolean())]).optional(),
});
export type EvalCase = z.infer<typeof EvalCase>;

/** The most cases a dataset holds: a run is a few minutes at most. */
export const MAX_EVAL_CASES = 200;

export type DatasetOutcome = { ok: true; cases: EvalCase[] } | { ok: false; message: string };

/** The cases of a JSONL text; blank lines are skipped. The first bad line is named, with its field and problem. */
export function parseDataset(jsonl: string): DatasetOutcome {
  const cases: EvalCase[] = [];
  const names = new Set<string>();
  const lines = jsonl.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const where = `line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { ok: false, message: `${where}: not valid JSON` };
    }
    const parsed = EvalCase.safeParse(value);
    if (!parsed.success) return { ok: false, message: `${where}: ${describe(parsed.error)}` };
    if (names.has(parsed.data.name))
      return { ok: false, message: `${where}: name: "${parsed.data.name}" is used twice` };
    names.add(parsed.data.name);
    cases.push(parsed.data);
  }
  if (cases.length === 0) return { ok: false, message: "the dataset holds no cases" };
  if (cases.length > MAX_EVAL_CASES) {
    return { ok: false, message: `the dataset holds ${cases.length} cases; at most ${MAX_EVAL_CASES}` };
  }
  return { ok: true, cases };
}

/** Checks cases given as values (`POST /admin/evals/datasets {cases}`) as lines are checked, `cases[2]` for line 3. */
export function parseCases(values: readonly unknown[]): DatasetOutcome {
  const outcome = parseDataset(values.map((v) => JSON.stringify(v ?? null)).join("\n"));
  if (outcome.ok) return outcome;
  return { ok: false, message: outcome.message.replace(/^line (\d+)/, (_, n: string) => `cases[${Number(n) - 1}]`) };
}

/**
 * The first problem as `field.path: what is wrong` (an unknown key named as the field). Not src/zod-issues.ts: this
 * module also runs in Node (the CLI), which loads only modules whose imports name their files.
 */
function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "is invalid";
  const at = issue.path.map(String);
  if (issue.code === "unrecognized_keys") return `${[...at, issue.keys[0] ?? ""].join(".")}: is not a known field`;
  const detail = issue.message.endsWith("received undefined") ? "is required" : issue.message;
  return at.length > 0 ? `${at.join(".")}: ${detail}` : detail;
}

// The one reading of a zod failure: which field (a dotted path; an unknown key is named as the field) and
// what is wrong with it, and the one wording of "this field of that thing is wrong".
import type { z } from "zod";
import { quoted } from "./quote";

export interface FieldProblem {
  /** The dotted path of the field at fault (`results.0.resultJson`), or null for the whole value. */
  param: string | null;
  /** What is wrong, in zod's words (or the schema's own message). */
  detail: string;
  /** The field is not one the schema knows. */
  unknownField: boolean;
}

/**
 * A union none of whose options matched is told by the option it came nearest to (the one with the fewest issues,
 * each unknown key counted as one): `{"enabled": "no"}` against "a whole mode, or only `enabled`" names `enabled`,
 * not every field a mode needs, and a mode missing a field names that field, not `enabled`.
 */
function nearestIssue(issue: z.core.$ZodIssue | undefined): { issue: z.core.$ZodIssue | undefined; at: string[] } {
  const at = issue?.path.map(String) ?? [];
  // A union with a message of its own ("must be a string, an array of text parts, or null") is told by it.
  if (issue?.code !== "invalid_union" || issue.errors.length === 0 || issue.message !== "Invalid input") {
    return { issue, at };
  }
  const size = (option: z.core.$ZodIssue[]) =>
    option.reduce((n, i) => n + (i.code === "unrecognized_keys" ? i.keys.length : 1), 0);
  const nearest = issue.errors.reduce((best, option) => (size(option) < size(best) ? option : best));
  const inner = nearestIssue(nearest[0]);
  return { issue: inner.issue, at: [...at, ...inner.at] };
}

export function firstProblem(error: z.ZodError): FieldProblem {
  const { issue, at } = nearestIssue(error.issues[0]);
  if (issue?.code === "unrecognized_keys") {
    return { param: [...at, issue.keys[0] ?? ""].join("."), detail: "is not a known field", unknownField: true };
  }
  return { param: at.length > 0 ? at.join(".") : null, detail: issue?.message ?? "is invalid", unknownField: false };
}

/** "Invalid 'x' in the request body: detail." / "Unknown field 'x' in the request body." / "Invalid request body: detail." */
export function fieldMessage(problem: FieldProblem, where: string): string {
  if (problem.unknownField) return `Unknown field ${quoted(problem.param ?? "")} in the ${where}.`;
  if (problem.param === null) return `Invalid ${where}: ${problem.detail}.`;
  return `Invalid ${quoted(problem.param)} in the ${where}: ${problem.detail}.`;
}

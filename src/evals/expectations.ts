// What a case expects, checked against what its turns did: every expectation but the judge (judge.ts), each failure
// told in one line that starts with the expectation's name (`contains: "Dana" is not in the answer`), as the CLI's
// table and the results show it. Plain functions over plain values: fast to test, the same in Node and the Worker.
import { schemaProblem } from "../json-schema-check.ts";
import type { EvalExpectations } from "./dataset.ts";

/** What a case's turns did, as the runner saw it over HTTP. */
export interface CaseObservation {
  /** The last turn's answer (the expectations on text read this one). */
  answer: string;
  /** Every tool call of every turn, its arguments parsed (a call whose arguments are not JSON has `{}`). */
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
  /** Model steps over all turns. */
  steps: number;
  /** Tokens over all turns, as the model reported them. */
  tokens: number;
}

const texts = (value: string | string[] | undefined): string[] => (value === undefined ? [] : [value].flat());
const shown = (text: string, max = 60) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);

/** The failures of every expectation but `judge`, in the order the expectations are listed; none when all hold. */
export function checkExpectations(expect: EvalExpectations, seen: CaseObservation): string[] {
  const failures: string[] = [];
  for (const text of texts(expect.contains)) {
    if (!seen.answer.includes(text)) failures.push(`contains: ${shown(text)} is not in the answer`);
  }
  for (const text of texts(expect.not_contains)) {
    if (seen.answer.includes(text)) failures.push(`not_contains: ${shown(text)} is in the answer`);
  }
  if (expect.regex !== undefined && !new RegExp(expect.regex, "u").test(seen.answer)) {
    failures.push(`regex: /${expect.regex}/ does not match the answer`);
  }
  if (expect.tool_called) failures.push(...toolCalledFailures(expect.tool_called, seen.toolCalls));
  if (expect.json_schema) {
    const failure = jsonSchemaFailure(expect.json_schema, seen.answer);
    if (failure) failures.push(failure);
  }
  if (expect.max_steps !== undefined && seen.steps > expect.max_steps) {
    failures.push(`max_steps: ${seen.steps} steps, more than ${expect.max_steps}`);
  }
  if (expect.max_tokens !== undefined && seen.tokens > expect.max_tokens) {
    failures.push(`max_tokens: ${seen.tokens} tokens, more than ${expect.max_tokens}`);
  }
  return failures;
}

function toolCalledFailures(
  expected: NonNullable<EvalExpectations["tool_called"]>,
  calls: CaseObservation["toolCalls"],
): string[] {
  const named = calls.filter((call) => call.name === expected.name);
  if (named.length === 0) {
    const made =
      calls.length === 0 ? "no tool was called" : `called: ${[...new Set(calls.map((c) => c.name))].join(", ")}`;
    return [`tool_called: ${expected.name} was not called (${made})`];
  }
  const wanted = expected.arguments;
  if (!wanted || named.some((call) => isSubset(wanted, call.arguments))) return [];
  return [
    `tool_called: ${expected.name} was called, but never with ${JSON.stringify(wanted)} (got ${JSON.stringify(named[0]?.arguments)})`,
  ];
}

/** Whether every key of `wanted` is in `actual` with a value that matches: objects by subset, the rest by equality. */
export function isSubset(wanted: unknown, actual: unknown): boolean {
  if (wanted !== null && typeof wanted === "object" && !Array.isArray(wanted)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    const record = actual as Record<string, unknown>;
    return Object.entries(wanted).every(([key, value]) => key in record && isSubset(value, record[key]));
  }
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && wanted.length === actual.length && wanted.every((v, i) => isSubset(v, actual[i]));
  }
  return Object.is(wanted, actual);
}

/** The answer as JSON: the whole text, or the first fenced block when the model wrapped it in one. */
function answerJson(answer: string): { ok: true; value: unknown } | { ok: false } {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/.exec(answer)?.[1];
  for (const candidate of [answer.trim(), fenced?.trim()]) {
    if (candidate === undefined) continue;
    try {
      return { ok: true, value: JSON.parse(candidate) };
    } catch {
      // Not this one.
    }
  }
  return { ok: false };
}

function jsonSchemaFailure(schema: Record<string, unknown>, answer: string): string | null {
  const parsed = answerJson(answer);
  if (!parsed.ok) return "json_schema: the answer is not JSON";
  const problem = schemaProblem(schema, parsed.value);
  return problem ? `json_schema: ${problem.message}` : null;
}

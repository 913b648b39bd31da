// The eval runner: each case through the real turn path over HTTP. A throwaway session per case (pinned to a mode
// version when one is asked for), its messages sent as turns, approvals answered as the case says (deny by default),
// a client's tools answered "not run in an eval", the session deleted after; then the expectations, and the judge.
// The same code runs from the CLI (scripts/eval.ts) and inside the Worker (server-side runs, src/evals/eval-jobs.ts).
import { z } from "zod";
import type { EvalCase } from "./dataset.ts";
import { type EvalHttp, type EvalTarget, evalHttp, type HttpAnswer } from "./eval-http.ts";
import { type CaseObservation, checkExpectations } from "./expectations.ts";
import { DEFAULT_MIN_SCORE, judgeAnswer, judgeFailure } from "./judge.ts";
import type { CaseResult, EvalResults } from "./results.ts";

export type { CaseResult, EvalResults };

export interface EvalRunOptions {
  mode: string;
  version?: number;
  cases: readonly EvalCase[];
  target: EvalTarget;
  /** The clock of `ms` (tests pass their own). */
  now?: () => number;
  /** How many cases run at once (1 by default; at most 16). */
  concurrency?: number;
  /** Told after each case (the CLI prints progress). */
  onCase?: (result: CaseResult) => void;
}

/** A setup problem that is not one case's failure: the mode or version is unknown, the key may not run evals. */
export class EvalSetupError extends Error {}

const TurnAnswer = z.object({
  sessionId: z.string(),
  status: z.string(),
  text: z.string(),
  iterations: z.number(),
  toolCalls: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      argumentsJson: z.string(),
      requiresApproval: z.boolean(),
      requiresClientExecution: z.boolean(),
      approval: z.string().nullable(),
      wasExecuted: z.boolean(),
      resultJson: z.string().nullable(),
    }),
  ),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  usage: z.object({ totalTokens: z.number() }).optional(),
});
type TurnAnswer = z.infer<typeof TurnAnswer>;
type ToolCall = TurnAnswer["toolCalls"][number];

const Created = z.object({ sessionId: z.string() });
const ModeList = z.object({ modes: z.array(z.object({ key: z.string(), version: z.number().int().optional() })) });

/** The most rounds of approvals and client results one turn is answered before the case gives up on it. */
const MAX_RESUMES = 10;

export async function runEval(options: EvalRunOptions): Promise<EvalResults> {
  const http = evalHttp(options.target);
  const now = options.now ?? Date.now;
  const version = options.version ?? (await currentVersion(http, options.mode));
  // Cases run `concurrency` at a time (each in its own session, so they cannot disturb each other); the results
  // keep the dataset's order.
  const cases: CaseResult[] = new Array(options.cases.length);
  let next = 0;
  const worker = async () => {
    while (next < options.cases.length) {
      const index = next++;
      const item = options.cases[index];
      if (!item) continue;
      const result = await runCase(http, options, item, now);
      cases[index] = result;
      options.onCase?.(result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, 16)) }, worker));
  return summarise(options.mode, version, cases);
}

export function summarise(mode: string, version: number | null, cases: CaseResult[]): EvalResults {
  const passed = cases.filter((c) => c.passed).length;
  const failed = cases.length - passed;
  const passRate = cases.length === 0 ? 0 : Math.round((passed / cases.length) * 10_000) / 10_000;
  return { mode, version, passed, failed, passRate, cases };
}

/**
 * The mode's current version, read from the admin's list of modes (an org's own mode of a key is listed after the
 * deployment's, and is the one its sessions get). An unknown mode stops the run before any case.
 */
async function currentVersion(http: EvalHttp, mode: string): Promise<number | null> {
  const read = await http.send("GET", "/admin/modes");
  if (!read.ok) throw new EvalSetupError(`The modes could not be read: ${read.message}`);
  const listed = ModeList.safeParse(read.body);
  const found = listed.success ? listed.data.modes.filter((m) => m.key === mode).at(-1) : undefined;
  if (!found) throw new EvalSetupError(`There is no mode ${JSON.stringify(mode)} for this key's organization.`);
  return found.version ?? null;
}

async function runCase(
  http: EvalHttp,
  options: EvalRunOptions,
  item: EvalCase,
  now: () => number,
): Promise<CaseResult> {
  const started = now();
  const created = await http.send("POST", "/context/sessions", {
    mode: options.mode,
    ...(options.version === undefined ? {} : { modeVersion: options.version }),
  });
  if (!created.ok)
    throw new EvalSetupError(`No session could be made for the mode ${options.mode}: ${created.message}`);
  const { sessionId } = Created.parse(created.body);
  const seen: CaseObservation = { answer: "", toolCalls: [], steps: 0, tokens: 0 };
  const failures: string[] = [];
  try {
    for (const message of item.messages) {
      const failure = await runTurn(http, sessionId, message.content, item.approve, seen);
      if (failure) {
        failures.push(failure);
        break;
      }
    }
  } finally {
    await http.send("DELETE", `/context/sessions/${encodeURIComponent(sessionId)}`);
  }
  if (failures.length === 0) failures.push(...checkExpectations(item.expect, seen));
  let judge: CaseResult["judge"];
  if (failures.length === 0 && item.expect.judge) {
    const verdict = await judgeAnswer(http, item.expect.judge, item.messages, seen.answer);
    judge = { score: verdict.score, reason: verdict.reason, route: verdict.route };
    if (!verdict.passed) failures.push(judgeFailure(verdict, item.expect.judge.min_score ?? DEFAULT_MIN_SCORE));
  }
  return {
    name: item.name,
    passed: failures.length === 0,
    failures,
    steps: seen.steps,
    tokens: seen.tokens,
    ms: Math.max(0, Math.round(now() - started)),
    ...(judge ? { judge } : {}),
  };
}

/** One user message to its end: approvals and client calls answered; a failure line when the turn did not complete. */
async function runTurn(
  http: EvalHttp,
  sessionId: string,
  content: string,
  approve: EvalCase["approve"],
  seen: CaseObservation,
): Promise<string | null> {
  const base = `/context/sessions/${encodeURIComponent(sessionId)}`;
  // The calls of every answer of the turn (the first, and each after approvals or results), by id.
  const calls = new Map<string, ToolCall>();
  let answer = await turnOf(await http.send("POST", `${base}/messages`, { content }));
  for (let round = 0; answer.ok && round < MAX_RESUMES; round++) {
    const turn = answer.turn;
    for (const call of turn.toolCalls) calls.set(call.id, call);
    if (turn.status === "awaiting_approval") {
      const decisions = pendingApprovals(turn.toolCalls).map((call) => ({
        toolCallId: call.id,
        approved: approves(approve, call.name),
        ...(approves(approve, call.name) ? {} : { reason: "Denied by the eval case (approve)." }),
      }));
      answer = await turnOf(await http.send("POST", `${base}/approvals`, { decisions }));
    } else if (turn.status === "awaiting_client") {
      const results = turn.toolCalls
        .filter((call) => call.requiresClientExecution && call.approval !== "denied")
        .map((call) => ({ toolCallId: call.id, errorMessage: "The eval runner runs no client tools." }));
      answer = await turnOf(await http.send("POST", `${base}/tool-results`, { results }));
    } else break;
  }
  if (!answer.ok) return answer.failure;
  const { turn } = answer;
  for (const call of turn.toolCalls) calls.set(call.id, call);
  // A turn's last answer carries its steps and its usage so far (the whole turn's).
  seen.answer = turn.text;
  seen.steps += turn.iterations;
  seen.tokens += turn.usage?.totalTokens ?? 0;
  for (const call of calls.values()) seen.toolCalls.push({ name: call.name, arguments: args(call) });
  if (turn.status !== "completed") {
    const why = turn.error ? ` (${turn.error.code}: ${turn.error.message})` : "";
    return `turn: ended ${turn.status}${why}`;
  }
  return null;
}

async function turnOf(response: HttpAnswer): Promise<{ ok: true; turn: TurnAnswer } | { ok: false; failure: string }> {
  if (!response.ok)
    return { ok: false, failure: `turn: refused, ${response.status} ${response.code ?? ""}: ${response.message}` };
  const parsed = TurnAnswer.safeParse(response.body);
  if (!parsed.success) return { ok: false, failure: "turn: the answer was not a turn's" };
  return { ok: true, turn: parsed.data };
}

function pendingApprovals(calls: ToolCall[]): ToolCall[] {
  return calls.filter((call) => call.requiresApproval && call.approval === "pending");
}

function approves(approve: EvalCase["approve"], tool: string): boolean {
  if (approve === undefined) return false;
  if (typeof approve === "boolean") return approve;
  return approve[tool] ?? false;
}

function args(call: ToolCall): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(call.argumentsJson);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

// The judge: a rubric scored by a model route. The judge is asked, through the OpenAI-compatible passthrough
// (`POST /v1/chat/completions`, `model` naming the route), for JSON `{"score": 0..1, "reason"}`; the case passes at
// `min_score` (0.7 by default), and the reason is kept in the results whether it passes or not.
import { z } from "zod";
import type { EvalCase } from "./dataset.ts";
import type { EvalHttp } from "./eval-http.ts";

export const DEFAULT_MIN_SCORE = 0.7;
/** The route a judge without one runs on: the deployment's fallback (the passthrough's `default`). */
export const DEFAULT_JUDGE_ROUTE = "default";

export interface JudgeVerdict {
  score: number;
  reason: string;
  passed: boolean;
  route: string;
}

const Verdict = z.object({ score: z.number().min(0).max(1), reason: z.string() });
const Completion = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1),
});

export const JUDGE_INSTRUCTIONS =
  "You grade an AI agent's answer against a rubric. Read the conversation and the agent's last answer, then answer " +
  'with JSON only, no other text: {"score": <a number from 0 to 1>, "reason": "<one or two sentences>"}. ' +
  "1 means the answer meets the rubric fully, 0 not at all.";

/** The judge's question: the rubric, what the person said, and the answer to grade. */
export function judgePrompt(rubric: string, messages: EvalCase["messages"], answer: string): string {
  const said = messages.map((m, i) => `Message ${i + 1} from the person: ${m.content}`).join("\n");
  return `Rubric: ${rubric}\n\n${said}\n\nThe agent's last answer:\n${answer}`;
}

/** The verdict's JSON: the whole text, or a fenced block when the model wrapped it. */
export function parseVerdict(text: string): { score: number; reason: string } | null {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/.exec(text)?.[1];
  const braces = /\{[\s\S]*\}/.exec(text)?.[0];
  for (const candidate of [text.trim(), fenced, braces]) {
    if (!candidate) continue;
    try {
      const parsed = Verdict.safeParse(JSON.parse(candidate));
      if (parsed.success) return parsed.data;
    } catch {
      // Not this one.
    }
  }
  return null;
}

/**
 * Asks the judge. A verdict that is not `{score, reason}` (or a judge route that fails) is a failure of the case
 * with the reason saying so, never a pass.
 */
export async function judgeAnswer(
  http: EvalHttp,
  judge: NonNullable<EvalCase["expect"]["judge"]>,
  messages: EvalCase["messages"],
  answer: string,
): Promise<JudgeVerdict> {
  const route = judge.route ?? DEFAULT_JUDGE_ROUTE;
  const minScore = judge.min_score ?? DEFAULT_MIN_SCORE;
  const response = await http.send("POST", "/v1/chat/completions", {
    model: route,
    temperature: 0,
    messages: [
      { role: "system", content: JUDGE_INSTRUCTIONS },
      { role: "user", content: judgePrompt(judge.rubric, messages, answer) },
    ],
  });
  if (!response.ok) {
    return {
      score: 0,
      reason: `the judge's route answered ${response.status}: ${response.message}`,
      passed: false,
      route,
    };
  }
  const completion = Completion.safeParse(response.body);
  const verdict = completion.success ? parseVerdict(completion.data.choices[0]?.message.content ?? "") : null;
  if (!verdict) {
    return { score: 0, reason: "the judge did not answer with JSON {score, reason}", passed: false, route };
  }
  return { ...verdict, passed: verdict.score >= minScore, route };
}

/** The judge's failure line, as the other expectations' are. */
export function judgeFailure(verdict: JudgeVerdict, minScore: number): string {
  return `judge: score ${verdict.score} under ${minScore}: ${verdict.reason}`;
}

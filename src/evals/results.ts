// The results of an eval run, one object per version: what `npm run eval --out` writes and GET /admin/evals/:id
// answers (`{"mode","version","passed","failed","passRate","cases":[{"name","passed","failures","steps","tokens","ms"}]}`).
import { z } from "zod";

export const CaseResultSchema = z.object({
  name: z.string(),
  passed: z.boolean(),
  /** One line each, starting with the expectation that failed (`contains: ...`, `turn: ...`, `judge: ...`). */
  failures: z.array(z.string()),
  steps: z.number().int(),
  tokens: z.number().int(),
  ms: z.number(),
  /** The judge's verdict, kept whether it passed or not. */
  judge: z.object({ score: z.number(), reason: z.string(), route: z.string() }).optional(),
});
export type CaseResult = z.infer<typeof CaseResultSchema>;

export const EvalResultsSchema = z.object({
  mode: z.string(),
  /** The version the cases ran with: the pinned one, else the mode's current version (null when it has none). */
  version: z.number().int().nullable(),
  passed: z.number().int(),
  failed: z.number().int(),
  passRate: z.number(),
  cases: z.array(CaseResultSchema),
});
export type EvalResults = z.infer<typeof EvalResultsSchema>;

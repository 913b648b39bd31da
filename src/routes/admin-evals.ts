// /admin/evals (org admins): an org's eval datasets (stored parsed, a JSONL text or an array of cases) and its runs.
// POST /admin/evals checks what it can at once (the dataset, the mode, the versions) and answers 202 with the run's
// id; the eval queue's consumer runs it (src/evals/eval-jobs.ts) and GET /admin/evals/:id shows its results, the
// comparison beside them when `compare` was asked.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { parseCases, parseDataset } from "../evals/dataset";
import type { EvalRunMessage } from "../evals/eval-jobs";
import { datasetCases, getRun, insertRun, listDatasets, listRuns, putDataset } from "../evals/eval-store";
import { EvalResultsSchema } from "../evals/results";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { KEY_NAME_PATTERN } from "../key-name";
import { D1AgentModeCatalogService, unknownModeMessage } from "../modes/catalog-service";
import { readVersion } from "../modes/mode-versions";

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };

const DatasetBody = z
  .strictObject({
    name: z
      .string()
      .regex(KEY_NAME_PATTERN, "must be 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter"),
    jsonl: z.string().min(1, "must not be empty").max(1_000_000).optional().describe("The cases, one JSON a line."),
    cases: z.array(z.unknown()).min(1, "must hold at least one case").optional().describe("The cases as values."),
  })
  .refine((b) => (b.jsonl === undefined) !== (b.cases === undefined), {
    error: "give the cases as `jsonl` or as `cases`, one of the two",
    path: ["jsonl"],
  });
const DatasetSummary = z.object({
  name: z.string(),
  cases: z.number().int(),
  createdAt: z.string(),
  createdBy: z.string(),
});

const RunBody = z.strictObject({
  mode: z.string().min(1, "must not be empty"),
  version: z.number().int().min(1).optional().describe("The version to run; the mode's current one without it."),
  compare: z.number().int().min(1).optional().describe("A version to run the same cases with, side by side."),
  dataset: z
    .string()
    .min(1, "must not be empty")
    .describe("The name of a dataset stored with POST /admin/evals/datasets."),
});
const EvalRunView = z.object({
  id: z.string(),
  mode: z.string(),
  version: z.number().int().nullable(),
  compare: z.number().int().nullable(),
  dataset: z.string(),
  status: z.enum(["queued", "running", "completed", "failed"]),
  results: z.array(EvalResultsSchema).nullable().describe("One per version: the run's first, the compared one second."),
  error: z.string().nullable(),
  createdAt: z.string(),
  createdBy: z.string(),
  finishedAt: z.string().nullable(),
});
const RunId = z.object({ id: z.string().min(1).max(200) });

export const adminEvalRoutes = routes()
  .openapi(
    createRoute({
      method: "post",
      path: "/admin/evals/datasets",
      summary: "Stores an eval dataset (a new one, or in place of the one of that name)",
      ...admin,
      request: jsonBody(DatasetBody, "The dataset's name and its cases (JSONL text, or an array)."),
      responses: { 201: json(DatasetSummary, "The stored dataset."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const parsed = body.jsonl !== undefined ? parseDataset(body.jsonl) : parseCases(body.cases ?? []);
      if (!parsed.ok) {
        throw new ApiError("invalid_dataset", `The dataset is not valid: ${parsed.message}.`, {
          param: body.jsonl !== undefined ? "jsonl" : "cases",
        });
      }
      const { org, user } = c.get("principal");
      return c.json(await putDataset(c.get("db"), org, user, body.name, parsed.cases), 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/evals/datasets",
      summary: "The organization's eval datasets",
      ...admin,
      responses: { 200: json(z.object({ data: z.array(DatasetSummary) }), "The datasets."), ...errors(401, 403) },
    }),
    async (c) => c.json({ data: await listDatasets(c.get("db"), c.get("principal").org) }, 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/admin/evals",
      summary: "Runs a dataset against a mode (and a version to compare with) in the background",
      ...admin,
      request: jsonBody(RunBody, "The mode, its version, the version to compare with, the dataset."),
      responses: {
        202: json(z.object({ id: z.string(), status: z.literal("queued") }), "The run is queued; GET it for results."),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const { org, user } = c.get("principal");
      if (!(await datasetCases(c.get("db"), org, body.dataset))) {
        throw new ApiError("eval_dataset_not_found", `There is no eval dataset "${body.dataset}".`, {
          param: "dataset",
        });
      }
      const catalog = new D1AgentModeCatalogService(c.get("db"), org);
      const mode = await catalog.getMode(body.mode);
      if (!mode) throw new ApiError("unknown_mode", await unknownModeMessage(catalog, body.mode), { param: "mode" });
      for (const param of ["version", "compare"] as const) {
        const version = body[param];
        if (version !== undefined && !(await readVersion(c.get("db"), mode, version))) {
          throw new ApiError("mode_version_not_found", `The mode ${mode.key} has no version ${version}.`, { param });
        }
      }
      const id = crypto.randomUUID();
      const run = { id, org, mode: mode.key, dataset: body.dataset, user };
      await insertRun(c.get("db"), { ...run, version: body.version ?? null, compare: body.compare ?? null });
      await c.env.EVAL_QUEUE.send({ kind: "eval_run", runId: id } satisfies EvalRunMessage);
      return c.json({ id, status: "queued" as const }, 202, { location: `/admin/evals/${id}` });
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/evals",
      summary: "The organization's eval runs, newest first (the last 50)",
      ...admin,
      responses: { 200: json(z.object({ data: z.array(EvalRunView) }), "The runs."), ...errors(401, 403) },
    }),
    async (c) => c.json({ data: await listRuns(c.get("db"), c.get("principal").org) }, 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/evals/{id}",
      summary: "An eval run: its status, and its results (per version) once completed",
      ...admin,
      request: { params: RunId },
      responses: { 200: json(EvalRunView, "The run."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const run = await getRun(c.get("db"), c.get("principal").org, c.req.valid("param").id);
      if (!run) throw new ApiError("eval_run_not_found", "There is no such eval run.", { param: "id" });
      return c.json(run, 200);
    },
  );

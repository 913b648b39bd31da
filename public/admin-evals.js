// @ts-check
// The admin page's eval runs (GET /admin/evals): each run's mode, versions, dataset, status and pass rate (the
// compared version's beside it), and a run's comparison case by case when it is chosen. Runs are started with
// POST /admin/evals or `npm run eval` (docs/evals.md).
import { byId, h } from "./js/dom.js";

/** @typedef {import("./js/api.js").ApiClient} ApiClient */
/**
 * @typedef {{ name: string, passed: boolean, failures: string[], steps: number, tokens: number, ms: number }} CaseResult
 * @typedef {{ mode: string, version: number | null, passed: number, failed: number, passRate: number,
 *   cases: CaseResult[] }} EvalResults
 * @typedef {{ id: string, mode: string, version: number | null, compare: number | null, dataset: string,
 *   status: string, results: EvalResults[] | null, error: string | null, createdAt: string }} EvalRun
 */

/** @param {number} rate */
const percent = (rate) => `${Math.round(rate * 1000) / 10}%`;
/** @param {EvalResults | undefined} r */
const rateOf = (r) => (r ? `${percent(r.passRate)} (${r.passed}/${r.passed + r.failed})` : "");
/** @param {number | null | undefined} v */
const versionName = (v) => (v === null || v === undefined ? "current" : `v${v}`);

/**
 * Fills the runs table; `labelCells` gives each cell its column's name (the page's narrow layout).
 * @param {ApiClient} api
 * @param {(body: HTMLElement) => void} labelCells
 */
export async function loadEvalRuns(api, labelCells) {
  const body = byId("evals-body");
  const status = byId("evals-status");
  /** @type {EvalRun[]} */
  let runs;
  try {
    ({ data: runs } = await api.request("GET", "/admin/evals"));
  } catch (error) {
    // The rest of the page does not depend on this section: its failure is shown here alone.
    status.textContent = `Eval runs could not be read: ${String(error)}`;
    status.classList.add("error");
    return;
  }
  status.textContent = runs.length === 0 ? "No eval runs yet." : `${runs.length} run${runs.length === 1 ? "" : "s"}.`;
  body.replaceChildren(
    ...runs.map((run) =>
      h(
        "tr",
        {},
        h("td", { text: run.createdAt.replace("T", " ").slice(0, 16) }),
        h("td", { text: run.mode }),
        h("td", { text: run.dataset }),
        h("td", { text: run.status === "failed" ? `failed: ${run.error ?? ""}` : run.status }),
        h("td", { text: `${versionName(run.results?.[0]?.version ?? run.version)} ${rateOf(run.results?.[0])}` }),
        h("td", {
          text: run.compare === null ? "" : `${versionName(run.compare)} ${rateOf(run.results?.[1])}`,
        }),
        h(
          "td",
          {},
          run.results
            ? h("button", { type: "button", class: "quiet", text: "Cases", onclick: () => showComparison(run) })
            : "",
        ),
      ),
    ),
  );
  labelCells(body);
}

/** A run's cases, one row each, each version's result side by side. @param {EvalRun} run */
function showComparison(run) {
  const results = run.results ?? [];
  const table = byId("evals-cases");
  const head = h(
    "tr",
    {},
    h("th", { scope: "col", text: "Case" }),
    ...results.map((r) => h("th", { scope: "col", text: `${versionName(r.version)} (${percent(r.passRate)})` })),
  );
  const names = results[0]?.cases.map((c) => c.name) ?? [];
  const rows = names.map((name) =>
    h(
      "tr",
      {},
      h("th", { scope: "row", text: name }),
      ...results.map((r) => {
        const item = r.cases.find((c) => c.name === name);
        return h("td", {
          class: item?.passed ? "" : "error",
          text: item ? (item.passed ? "pass" : `fail: ${item.failures[0] ?? ""}`) : "",
        });
      }),
    ),
  );
  table.replaceChildren(
    h("caption", { text: `${run.mode}, dataset ${run.dataset}` }),
    h("thead", {}, head),
    h("tbody", {}, ...rows),
  );
  table.hidden = false;
}

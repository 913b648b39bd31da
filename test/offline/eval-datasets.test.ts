// The project's own modes' datasets (evals/<mode>.jsonl) pass against the offline demo model, as
// `npm run eval -- --mode <mode> evals/<mode>.jsonl` runs them: through the runner, each case a real turn.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import ddrAuthoring from "../../evals/ddr_authoring.jsonl?raw";
import general from "../../evals/general.jsonl?raw";
import workspace from "../../evals/workspace.jsonl?raw";
import { parseDataset } from "../../src/evals/dataset";
import { runEval } from "../../src/evals/runner";
import { TEST_KEYS } from "../fixtures/keys";

const target = {
  baseUrl: "https://aptix.test",
  key: TEST_KEYS.admin.key,
  fetch: (input: Request | string | URL, init?: RequestInit) => exports.default.fetch(input, init),
};

// One test a dataset (each well inside the test timeout on a loaded machine), its cases four at a time.
describe.each([
  ["general", general],
  ["ddr_authoring", ddrAuthoring],
  ["workspace", workspace],
])("evals/%s.jsonl", (mode, jsonl) => {
  it("passes against the offline demo model", async () => {
    const dataset = parseDataset(jsonl);
    if (!dataset.ok) throw new Error(`evals/${mode}.jsonl: ${dataset.message}`);
    const results = await runEval({ mode, cases: dataset.cases, target, concurrency: 4 });
    expect(results.cases.filter((c) => !c.passed)).toEqual([]);
    expect(results).toMatchObject({ mode, version: 1, passRate: 1 });
  });
});

// Server-side runs: a dataset stored by POST /admin/evals/datasets, a run queued by POST /admin/evals (202), run by the
// eval queue's consumer through the session objects, its results (and the comparison) read back by GET; bad input
// refused naming what was wrong, and another org's runs not seen.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { callAs } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const admin = TEST_KEYS.admin.key;

/** The run once the queue's consumer has finished it (the queue delivers it as soon as it is sent). */
async function finished(id: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { body } = await callAs(admin, "GET", `/admin/evals/${id}`);
    if (body.status === "completed" || body.status === "failed" || Date.now() > deadline) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("/admin/evals", () => {
  it("runs a stored dataset in the background and shows its results beside the compared version's", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "Hello, Dana!" },
      { type: "completion", content: "Goodbye." },
    ]);
    const jsonl = JSON.stringify({
      name: "greets",
      messages: [{ role: "user", content: `greet Dana ${script.marker}` }],
      expect: { contains: "Dana" },
    });
    const stored = await callAs(admin, "POST", "/admin/evals/datasets", { name: "greetings", jsonl });
    expect(stored).toMatchObject({ status: 201, body: { name: "greetings", cases: 1 } });
    expect((await callAs(admin, "GET", "/admin/evals/datasets")).body).toMatchObject({
      data: [{ name: "greetings", cases: 1 }],
    });

    const queued = await callAs(admin, "POST", "/admin/evals", {
      mode: "general",
      version: 1,
      compare: 1,
      dataset: "greetings",
    });
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ id: expect.any(String), status: "queued" });
    const run = await finished(String(queued.body.id));
    expect(run).toMatchObject({ mode: "general", version: 1, compare: 1, dataset: "greetings", status: "completed" });
    expect(run.results).toEqual([
      {
        mode: "general",
        version: 1,
        passed: 1,
        failed: 0,
        passRate: 1,
        cases: [
          { name: "greets", passed: true, failures: [], steps: 1, tokens: expect.any(Number), ms: expect.any(Number) },
        ],
      },
      {
        mode: "general",
        version: 1,
        passed: 0,
        failed: 1,
        passRate: 0,
        cases: [
          expect.objectContaining({
            name: "greets",
            passed: false,
            failures: ['contains: "Dana" is not in the answer'],
          }),
        ],
      },
    ]);
    expect((await callAs(admin, "GET", "/admin/evals")).body).toMatchObject({ data: [{ id: queued.body.id }] });
    // The run's own key is gone with it.
    const keys = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE id LIKE 'eval-run-%'").first<{
      n: number;
    }>();
    expect(keys?.n).toBe(0);
    expect((await callAs(TEST_KEYS.otherOrg.key, "GET", `/admin/evals/${queued.body.id}`)).status).toBe(404);
  });

  it("refuses a malformed dataset line, naming it", async () => {
    const jsonl =
      '{"name": "a", "messages": [{"role": "user", "content": "x"}], "expect": {}}\n{"name": "b", "messages": [{"role": "user", "content": "x"}], "expect": {"regex": "("}}';
    const { status, body } = await callAs(admin, "POST", "/admin/evals/datasets", { name: "bad", jsonl });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      error: {
        code: "invalid_dataset",
        param: "jsonl",
        message: "The dataset is not valid: line 2: expect.regex: not a valid regular expression.",
      },
    });
    const names = (await callAs(admin, "GET", "/admin/evals/datasets")).body.data as { name: string }[];
    expect(names.map((d) => d.name)).not.toContain("bad");
  });

  it("refuses a run of a version the mode does not have", async () => {
    const cases = [{ name: "a", messages: [{ role: "user", content: "x" }], expect: {} }];
    await callAs(admin, "POST", "/admin/evals/datasets", { name: "small", cases });
    const runs = async () => ((await callAs(admin, "GET", "/admin/evals")).body.data as unknown[]).length;
    const before = await runs();
    const { status, body } = await callAs(admin, "POST", "/admin/evals", {
      mode: "general",
      version: 9,
      dataset: "small",
    });
    expect(status).toBe(404);
    expect(body).toMatchObject({ error: { code: "mode_version_not_found", param: "version" } });
    expect(await runs()).toBe(before);
  });
});

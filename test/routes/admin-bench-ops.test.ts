// GET and DELETE /admin/bench/ops (src/routes/admin-bench-ops.ts): not a route without APTIX_COUNT_OPS; with it, the
// counts of what the Worker's entry and the objects asked of their bindings. Who may call it with the var is walked in
// test/tenancy/route-roles.test.ts.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";

const OPERATOR = TEST_KEYS.operator.key;

/** A request to the Worker's entry with the var set, as bench:ops runs it; waits for its work after the reply. */
async function counting(method: string, path: string, body?: unknown): Promise<Response> {
  const ctx = createExecutionContext();
  const headers = { ...authHeaders(OPERATOR), ...(body === undefined ? {} : { "content-type": "application/json" }) };
  // As the runtime hands a request to the Worker (its `cf` typed as an incoming request's).
  const request: Parameters<typeof worker.fetch>[0] = new Request(`https://aptix.test${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const response = await worker.fetch(request, { ...env, APTIX_COUNT_OPS: "1" }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

interface Counts {
  doRequests: number;
  doRequestsByBinding: Record<string, number>;
  d1Queries: number;
}

describe("/admin/bench/ops", () => {
  it("is no route without APTIX_COUNT_OPS, even for an operator", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await exports.default.fetch("https://aptix.test/admin/bench/ops", {
        method,
        headers: authHeaders(OPERATOR),
      });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("route_not_found");
    }
  });

  it("counts what a request through the Worker's entry asked of the bindings, until reset", async () => {
    expect((await counting("DELETE", "/admin/bench/ops")).status).toBe(204);
    const created = await counting("POST", "/context/sessions", {});
    expect(created.status).toBe(201);
    const after = ((await (await counting("GET", "/admin/bench/ops")).json()) as { counts: Counts }).counts;
    expect(after.doRequestsByBinding.AGENT_SESSION).toBeGreaterThan(0);
    expect(after.d1Queries).toBeGreaterThan(0);
    await counting("DELETE", "/admin/bench/ops");
    const reset = ((await (await counting("GET", "/admin/bench/ops")).json()) as { counts: Counts }).counts;
    expect(reset.doRequests).toBe(0);
  });
});

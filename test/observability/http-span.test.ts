// The Worker's request as a server span: named for the route that answered (not for middleware matched after it),
// with its status; a refused request's span names no one and carries no key.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SPAN_KIND } from "./span-record";
import { newTrace, spansOfTrace } from "./spans";

describe("the request's server span", () => {
  it("is named for the route that answered", async () => {
    const trace = newTrace();
    const response = await exports.default.fetch("http://aptix.test/healthz", {
      headers: { traceparent: trace.traceparent },
    });
    expect(response.status).toBe(200);
    const [span] = await spansOfTrace(trace.traceId);
    expect([
      span?.name,
      span?.kind,
      span?.attributes["http.route"],
      span?.attributes["http.response.status_code"],
    ]).toEqual(["GET /healthz", SPAN_KIND.server, "/healthz", 200]);
  });

  it("records a refused request's status, naming no one and carrying no key", async () => {
    const trace = newTrace();
    const badKey = "sk-aptix-not-a-key-4f1c2d";
    const response = await exports.default.fetch("http://aptix.test/modes", {
      headers: { traceparent: trace.traceparent, authorization: `Bearer ${badKey}` },
    });
    expect(response.status).toBe(401);
    const [span] = await spansOfTrace(trace.traceId);
    expect(span?.attributes["http.response.status_code"]).toBe(401);
    expect(span?.attributes["aptix.key.id"]).toBeUndefined();
    expect(JSON.stringify(span)).not.toContain(badKey);
  });
});

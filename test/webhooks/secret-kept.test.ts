// The signing secret is shown once, in the answer that creates the endpoint: never in a read, a list, a delivery's
// record, the audit log or a log line, and D1 holds it sealed only.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { call } from "../fixtures/sessions";
import { ADMIN, consume, createEndpoint, eventMessage, receiverUrl } from "./fixtures";

describe("a webhook endpoint's signing secret", () => {
  it("appears in no answer but the creation's, no stored row, no log line and no delivery record", async () => {
    const logged: unknown[] = [];
    for (const method of ["log", "info", "warn", "error"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args));
    }
    try {
      const target = receiverUrl("secret", 1);
      const { endpoint, secret } = await createEndpoint(ADMIN, target.url, ["schedule.failed"]);
      const message = eventMessage({ type: "schedule.failed" });
      await consume(message);
      await consume(message, { now: Date.now() + 5_000, attempts: 2 });
      await call("PATCH", `/context/webhooks/${endpoint.id}`, { description: "Changed." }, ADMIN);

      const answers = await Promise.all([
        call("GET", "/context/webhooks", undefined, ADMIN),
        call("GET", `/context/webhooks/${endpoint.id}`, undefined, ADMIN),
        call("GET", `/context/webhooks/${endpoint.id}/deliveries`, undefined, ADMIN),
        call("GET", "/admin/audit", undefined, ADMIN),
      ]);
      const rows = await Promise.all(
        ["webhook_endpoints", "webhook_deliveries", "webhook_attempts", "audit_log"].map(
          async (table) => (await env.DB.prepare(`SELECT * FROM ${table}`).all()).results,
        ),
      );
      const everything = JSON.stringify([answers, rows, logged]);
      // The secret, and the key it carries without its prefix.
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice("whsec_".length));
      // The record is there to be searched: lines were logged, and the delivery went, twice.
      expect(logged.length).toBeGreaterThan(0);
      expect(answers[2]?.json).toMatchObject({ deliveries: [{ status: "delivered", attempts: [{}, {}] }] });
    } finally {
      vi.restoreAllMocks();
    }
  });
});

// Production settings (WEBHOOK_ALLOW_HTTP_LOOPBACK unset): an endpoint on a private, loopback or link-local address,
// or a name only a private network resolves, is refused at creation (400 naming `url`, nothing stored), and one
// stored under development settings is never sent to: its delivery is recorded as refused and the endpoint disabled.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { WebhookDeliveryView } from "../../src/webhooks/delivery-store";
import type { WebhookEndpointView } from "../../src/webhooks/endpoint-store";
import { authHeaders } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import { ADMIN, consume, createEndpoint, eventMessage, received, receiverUrl } from "./fixtures";

const production: Cloudflare.Env = { ...env, WEBHOOK_ALLOW_HTTP_LOOPBACK: "false" };
const app = createApp();

function createInProduction(url: string, events = ["turn.completed"]) {
  return app.fetch(
    new Request("http://aptix.test/context/webhooks", {
      method: "POST",
      headers: { ...authHeaders(ADMIN), "content-type": "application/json" },
      body: JSON.stringify({ url, events }),
    }),
    production,
    createExecutionContext(),
  );
}

const REFUSED = [
  "http://127.0.0.1:8789/hooks",
  "https://127.0.0.1/hooks",
  "https://10.1.2.3/hooks",
  "https://172.20.0.5/hooks",
  "https://192.168.1.10/hooks",
  "https://169.254.169.254/latest/meta-data",
  "https://100.64.0.1/hooks",
  "https://0.0.0.0/hooks",
  "https://[::1]/hooks",
  "https://[fd00::1]/hooks",
  "https://[fe80::1]/hooks",
  "https://[::ffff:10.0.0.1]/hooks",
  "https://localhost/hooks",
  "https://db.internal/hooks",
  "https://printer.local/hooks",
  "https://intranet/hooks",
  "https://user:pass@hooks.example.com/in",
];

describe("webhook endpoints on private addresses", () => {
  it("refuses each private, loopback or link-local URL at creation in production settings, creating nothing", async () => {
    for (const url of REFUSED) {
      const response = await createInProduction(url);
      const body = (await response.json()) as { error: { code: string; param: string; message: string } };
      expect([url, response.status, body.error.code, body.error.param]).toEqual([url, 400, "invalid_request", "url"]);
    }
    const { json } = await call("GET", "/context/webhooks", undefined, ADMIN);
    expect((json as { endpoints: unknown[] }).endpoints).toEqual([]);
  });

  it("accepts a public https: URL in production settings", async () => {
    // Subscribed to an event no other test of this file publishes (nothing is sent to it).
    expect((await createInProduction("https://hooks.example.com/aptix", ["schedule.failed"])).status).toBe(201);
  });

  it("never sends to a loopback endpoint stored under development settings once the settings are production's", async () => {
    const target = receiverUrl("never");
    const { endpoint } = await createEndpoint(ADMIN, target.url);
    const result = await consume(eventMessage(), { env: production });
    expect(result.explicitAcks).toEqual(["message-1"]);
    expect(await received(target.name)).toEqual([]);

    const read = await call("GET", `/context/webhooks/${endpoint.id}`, undefined, ADMIN);
    const after = (read.json as { endpoint: WebhookEndpointView }).endpoint;
    expect(after.enabled).toBe(false);
    expect(after.disabledReason).toMatch(/URL is refused/);
    const listed = await call("GET", `/context/webhooks/${endpoint.id}/deliveries`, undefined, ADMIN);
    const [delivery] = (listed.json as { deliveries: WebhookDeliveryView[] }).deliveries;
    expect(delivery?.status).toBe("abandoned");
    expect(delivery?.attempts).toMatchObject([{ statusCode: null, error: expect.stringMatching(/^Not sent/) }]);
  });
});

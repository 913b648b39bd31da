// Bad input to the webhook routes: a clear error in OpenAI's shape naming the field, and nothing created or changed.
import { describe, expect, it } from "vitest";
import type { WebhookEndpointView } from "../../src/webhooks/endpoint-store";
import { call } from "../fixtures/sessions";
import { ADMIN, createEndpoint, receiverUrl } from "./fixtures";

const url = "https://hooks.example.com/in";

const BAD_BODIES: [string, unknown, string, string][] = [
  ["no url", { events: ["turn.completed"] }, "invalid_request", "url"],
  ["a url that is no URL", { url: "hooks", events: ["turn.completed"] }, "invalid_request", "url"],
  ["an ftp: url", { url: "ftp://hooks.example.com/", events: ["turn.completed"] }, "invalid_request", "url"],
  ["http: off loopback", { url: "http://hooks.example.com/", events: ["turn.completed"] }, "invalid_request", "url"],
  ["no events", { url, events: [] }, "invalid_request", "events"],
  ["an unknown event", { url, events: ["turn.started"] }, "invalid_request", "events.0"],
  ["an event twice", { url, events: ["turn.failed", "turn.failed"] }, "invalid_request", "events"],
  ["the test event", { url, events: ["webhook.test"] }, "invalid_request", "events.0"],
  ["an unknown field", { url, events: ["turn.failed"], secret: "whsec_mine" }, "unknown_field", "secret"],
  [
    "a description too long",
    { url, events: ["turn.failed"], description: "x".repeat(501) },
    "invalid_request",
    "description",
  ],
];

describe("bad input to the webhook routes", () => {
  // First in the file: no endpoint exists before it.
  it("refuses each bad creation body, naming the field, creating nothing", async () => {
    for (const [what, body, code, param] of BAD_BODIES) {
      const { status, json } = await call("POST", "/context/webhooks", body, ADMIN);
      expect([what, status, json]).toEqual([
        what,
        400,
        { error: { message: expect.stringMatching(/.+/), type: "invalid_request_error", code, param } },
      ]);
    }
    const listed = await call("GET", "/context/webhooks", undefined, ADMIN);
    expect((listed.json as { endpoints: unknown[] }).endpoints).toEqual([]);
  });

  it("refuses a change with nothing to change, an unknown field, or a bad url, changing nothing", async () => {
    const { endpoint } = await createEndpoint(ADMIN, receiverUrl("kept").url);
    const path = `/context/webhooks/${endpoint.id}`;
    const answers = await Promise.all([
      call("PATCH", path, {}, ADMIN),
      call("PATCH", path, { enabled: "no" }, ADMIN),
      call("PATCH", path, { url: "https://10.0.0.1/" }, ADMIN),
      call("PATCH", path, { secret: "whsec_x" }, ADMIN),
    ]);
    expect(answers.map((a) => [a.status, (a.json as { error: { param: string | null } }).error.param])).toEqual([
      [400, null],
      [400, "enabled"],
      [400, "url"],
      [400, "secret"],
    ]);
    const read = await call("GET", path, undefined, ADMIN);
    expect((read.json as { endpoint: WebhookEndpointView }).endpoint).toEqual(endpoint);
  });

  it("refuses a deliveries page with a bad limit, naming it", async () => {
    const { endpoint } = await createEndpoint(ADMIN, receiverUrl("paged").url);
    const { status, json } = await call("GET", `/context/webhooks/${endpoint.id}/deliveries?limit=0`, undefined, ADMIN);
    expect([status, (json as { error: { param: string } }).error.param]).toEqual([400, "limit"]);
  });
});

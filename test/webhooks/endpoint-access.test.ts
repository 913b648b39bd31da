// Who sees and changes which endpoint: an admin's is the org's (told of every session), a member's their own (told of
// their sessions only); an admin sees and changes every endpoint of the org, a member their own; another member
// and another org are told it does not exist. Events reach the endpoints of their org and, for a member's, their own.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WebhookEndpointView } from "../../src/webhooks/endpoint-store";
import { authHeaders } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import {
  ADMIN,
  consume,
  createEndpoint,
  eventMessage,
  MEMBER,
  OTHER_MEMBER,
  OTHER_ORG,
  received,
  receiverUrl,
} from "./fixtures";

const idsListedTo = async (key: string) =>
  ((await call("GET", "/context/webhooks", undefined, key)).json as { endpoints: WebhookEndpointView[] }).endpoints.map(
    (e) => e.id,
  );

/** DELETE answers 204 without a body. */
const remove = async (key: string, path: string) =>
  (await exports.default.fetch(`http://aptix.test${path}`, { method: "DELETE", headers: authHeaders(key) })).status;

describe("webhook endpoint access", () => {
  it("makes an admin's endpoint the org's and a member's their own", async () => {
    const org = await createEndpoint(ADMIN, receiverUrl("org").url);
    const own = await createEndpoint(MEMBER, receiverUrl("own").url);
    expect([org.endpoint.scope, org.endpoint.owner]).toEqual(["org", null]);
    expect([own.endpoint.scope, own.endpoint.owner]).toEqual(["user", "bob"]);
    expect(org.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  it("lists the org's endpoints to an admin and a member's own to the member", async () => {
    const org = await createEndpoint(ADMIN, receiverUrl("org").url);
    const own = await createEndpoint(MEMBER, receiverUrl("own").url);
    expect(await idsListedTo(ADMIN)).toEqual(expect.arrayContaining([org.endpoint.id, own.endpoint.id]));
    const members = await idsListedTo(MEMBER);
    expect([members.includes(own.endpoint.id), members.includes(org.endpoint.id)]).toEqual([true, false]);
    expect((await idsListedTo(OTHER_MEMBER)).includes(own.endpoint.id)).toBe(false);
    expect(await idsListedTo(OTHER_ORG)).toEqual([]);
  });

  it("answers 404 to another member and another org for every route of an endpoint, and changes nothing", async () => {
    const { endpoint } = await createEndpoint(MEMBER, receiverUrl("own").url);
    const base = `/context/webhooks/${endpoint.id}`;
    for (const key of [OTHER_MEMBER, OTHER_ORG]) {
      const answers = await Promise.all([
        call("GET", base, undefined, key),
        call("PATCH", base, { enabled: false }, key),
        call("POST", `${base}/test`, undefined, key),
        call("GET", `${base}/deliveries`, undefined, key),
        call("POST", `${base}/deliveries/msg_x/retry`, undefined, key),
        remove(key, base).then((status) => ({ status, json: { error: { code: "webhook_not_found" } } })),
      ]);
      expect(answers.map((a) => [a.status, (a.json as { error: { code: string } }).error.code])).toEqual(
        Array(6).fill([404, "webhook_not_found"]),
      );
    }
    const read = await call("GET", base, undefined, MEMBER);
    expect((read.json as { endpoint: WebhookEndpointView }).endpoint.enabled).toBe(true);
  });

  it("lets an admin read, change and remove a member's endpoint, and the member the org's not at all", async () => {
    const own = await createEndpoint(MEMBER, receiverUrl("own").url);
    const org = await createEndpoint(ADMIN, receiverUrl("org").url);
    const changed = await call("PATCH", `/context/webhooks/${own.endpoint.id}`, { events: ["turn.paused"] }, ADMIN);
    expect((changed.json as { endpoint: WebhookEndpointView }).endpoint.events).toEqual(["turn.paused"]);
    expect((await call("GET", `/context/webhooks/${org.endpoint.id}`, undefined, MEMBER)).status).toBe(404);
    expect(await remove(ADMIN, `/context/webhooks/${own.endpoint.id}`)).toBe(204);
    expect((await idsListedTo(MEMBER)).includes(own.endpoint.id)).toBe(false);
  });

  it("tells a member's endpoint of their own sessions' events only, and the org's endpoint of all", async () => {
    const org = receiverUrl("org");
    const bob = receiverUrl("bob");
    const carol = receiverUrl("carol");
    await createEndpoint(ADMIN, org.url);
    await createEndpoint(MEMBER, bob.url);
    await createEndpoint(OTHER_MEMBER, carol.url);
    await consume(eventMessage({ user: "bob" }));
    expect([(await received(org.name)).length, (await received(bob.name)).length]).toEqual([1, 1]);
    expect(await received(carol.name)).toEqual([]);
  });
});

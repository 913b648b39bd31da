// An org and key without any limit: once the meter has said so, this isolate's calls of theirs skip the
// reservation (no round trip to the meter before the call) for UNBOUNDED_MS, and only settle, so their use is
// still counted. Setting a budget through /admin/budget makes this isolate ask again at once.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetUnbounded, type Reservation, reserveCall } from "../../src/metering/meter";
import { JsonAdminLogger } from "../../src/observability/admin-logger";
import { newChatKey } from "../passthrough/harness";

const estimate = { tokens: 500, costMicros: 0 };
const logger = new JsonAdminLogger({});
const meterOf = (org: string) => env.ORG_METER.get(env.ORG_METER.idFromName(org));

/** Reserves one call of `org` and `keyId` with a reservation of its own (a lease of one call, ending in 50 ms). */
async function reserve(org: string, keyId: string) {
  return reserveCall(env.ORG_METER, { org, keyId }, estimate, logger, {
    leaseCalls: 1,
    leaseMs: 50,
    owner: {},
    defer: () => {},
  });
}

/** Settles a call that used 120 tokens; resolves once the settle has reached the meter. */
function settle(reservation: Reservation): Promise<void> {
  return reservation.settle({ tokens: 120, costMicros: 0 });
}

async function reservedNow(org: string): Promise<number> {
  return (await meterOf(org).status()).org.reserved.tokens;
}

describe("an org and key without any limit", () => {
  it("reserves at the meter for its first call only, and the meter still counts every call's use", async () => {
    const org = `org-unbounded-${crypto.randomUUID()}`;
    const held: number[] = [];
    for (let i = 0; i < 3; i++) {
      const reserved = await reserve(org, "key-1");
      if (!reserved.ok) throw new Error(reserved.refusal.message);
      held.push(await reservedNow(org));
      await settle(reserved.reservation);
    }
    expect(held).toEqual([500, 0, 0]);
    expect((await meterOf(org).status()).org.day.tokens).toBe(360);
  });

  it("reserves again once the org's budget changed in this isolate, and is refused past it", async () => {
    const org = `org-unbounded-${crypto.randomUUID()}`;
    const first = await reserve(org, "key-1");
    if (!first.ok) throw new Error(first.refusal.message);
    await settle(first.reservation);
    await meterOf(org).setLimits(null, { tokensPerDay: 100, tokensPerMonth: null, costPerMonthUsd: null });
    forgetUnbounded(org);

    const refused = await reserve(org, "key-1");
    expect(refused.ok).toBe(false);
  });

  it("forgets an org's unbounded calls when an admin sets its budget through /admin/budget", async () => {
    const key = await newChatKey(`org-unbounded-${crypto.randomUUID()}`, ["chat", "admin"]);
    const first = await reserve(key.org, key.keyId);
    if (!first.ok) throw new Error(first.refusal.message);
    await settle(first.reservation);

    const put = await exports.default.fetch("http://localhost/admin/budget", {
      method: "PUT",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ tokensPerDay: 100 }),
    });
    expect(put.status).toBe(200);
    const refused = await reserve(key.org, key.keyId);
    expect(refused.ok).toBe(false);
  });

  it("does not believe a 'no limits' answer asked for before the org's budget changed in this isolate", async () => {
    const org = `org-unbounded-${crypto.randomUUID()}`;
    const asked = reserve(org, "key-1");
    // The budget changes here while the meter's answer is on its way.
    forgetUnbounded(org);
    const first = await asked;
    if (!first.ok) throw new Error(first.refusal.message);
    await settle(first.reservation);

    const next = await reserve(org, "key-1");
    if (!next.ok) throw new Error(next.refusal.message);
    expect(await reservedNow(org)).toBe(500);
    await settle(next.reservation);
  });
});

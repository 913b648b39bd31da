// Idempotency-Key on the POSTs that start work: the same key and body answer the first answer again (no second
// turn, no second model call), another body 422, a first request still running 409; keys per org and caller; a
// window that ends (simulated time); a lease that frees the key of a request that died; a bad header refused.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { requestHash } from "../../src/jobs/idempotency";
import { AgentExecuteResponse, TurnAccepted } from "../../src/wire/turn";
import { holdKey, keyed, scopeOf, testStore } from "../fixtures/idempotency";
import { TEST_KEYS } from "../fixtures/keys";
import { createSession, type ErrorBody } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const errorOf = async (response: Response) => ((await response.json()) as ErrorBody).error;

describe("an Idempotency-Key", () => {
  it("replays the first answer of a message with no second turn and no second model call", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Once." }]);
    const id = await createSession();
    const key = crypto.randomUUID();
    const body = { content: `once ${script.marker}` };
    const first = await keyed("POST", `/context/sessions/${id}/messages`, body, key);
    const again = await keyed("POST", `/context/sessions/${id}/messages`, body, key);
    expect([first.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([200, 200, "true"]);
    expect(AgentExecuteResponse.parse(await again.json())).toEqual(AgentExecuteResponse.parse(await first.json()));
    expect(await script.requests()).toHaveLength(1);
  });

  it("replays a background turn's 202 with its Location, the same turn", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Later." }]);
    const id = await createSession();
    const key = crypto.randomUUID();
    const send = () =>
      keyed("POST", `/context/sessions/${id}/messages`, { content: script.marker }, key, {
        headers: { prefer: "respond-async" },
      });
    const [first, again] = [await send(), await send()];
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(TurnAccepted.parse(await again.json()).turnId).toBe(TurnAccepted.parse(await first.json()).turnId);
  });

  it("replays the agent's chat completion door with no second model call", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello once." }]);
    const body = { model: "aptix-agent/general", messages: [{ role: "user", content: script.marker }] };
    const key = crypto.randomUUID();
    const first = await keyed("POST", "/agent/v1/chat/completions", body, key);
    const again = await keyed("POST", "/agent/v1/chat/completions", body, key);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(await again.json()).toEqual(await first.json());
    expect(await script.requests()).toHaveLength(1);
  });

  it("replays a streamed answer whole, as it was sent, with no second model call", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Streamed once." }]);
    const body = { model: "aptix-agent/general", stream: true, messages: [{ role: "user", content: script.marker }] };
    const key = crypto.randomUUID();
    const first = await keyed("POST", "/agent/v1/chat/completions", body, key);
    const sent = await first.text();
    let again = await keyed("POST", "/agent/v1/chat/completions", body, key);
    // The stream is kept as it ends, just after its last byte: until then the key is in flight.
    while (again.status === 409) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      again = await keyed("POST", "/agent/v1/chat/completions", body, key);
    }
    expect([again.status, again.headers.get("content-type")]).toEqual([200, first.headers.get("content-type")]);
    expect(await again.text()).toBe(sent);
    expect(await script.requests()).toHaveLength(1);
  });

  it("refuses the same key with another body with 422 naming the header, and runs nothing", async () => {
    const key = crypto.randomUUID();
    await keyed("POST", "/context/sessions", {}, key);
    const other = await keyed("POST", "/context/sessions", { mode: "workspace" }, key);
    expect(other.status).toBe(422);
    expect(await errorOf(other)).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
  });

  it("answers 409 while the first request with the key is still running", async () => {
    const key = crypto.randomUUID();
    await holdKey("/context/sessions", {}, key);
    const second = await keyed("POST", "/context/sessions", {}, key);
    expect([second.status, second.headers.get("retry-after")]).toEqual([409, "1"]);
    expect(await errorOf(second)).toMatchObject({ code: "idempotency_key_in_flight", param: "Idempotency-Key" });
  });

  it("keeps keys per caller: another member's and another org's same key run their own requests", async () => {
    const key = crypto.randomUUID();
    const ids = [];
    for (const as of [TEST_KEYS.chat, TEST_KEYS.otherMember, TEST_KEYS.otherOrg]) {
      const created = await keyed("POST", "/context/sessions", {}, key, { as });
      expect([created.status, created.headers.get("idempotent-replayed")]).toEqual([201, null]);
      ids.push(((await created.json()) as { sessionId: string }).sessionId);
    }
    expect(new Set(ids).size).toBe(3);
  });

  it("gives the key back after a refusal: the same request runs again, and is not a replay", async () => {
    const key = crypto.randomUUID();
    const refused = await keyed("POST", "/context/sessions", { mode: "astrology" }, key);
    const again = await keyed("POST", "/context/sessions", { mode: "astrology" }, key);
    expect([refused.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([400, 400, null]);
  });

  it("refuses an empty key and one over 255 characters with 400 naming the header", async () => {
    for (const key of ['""', "k".repeat(256)]) {
      const refused = await keyed("POST", "/context/sessions", {}, key);
      expect(refused.status).toBe(400);
      expect(await errorOf(refused)).toMatchObject({ code: "invalid_idempotency_key", param: "Idempotency-Key" });
    }
  });
});

describe("the idempotency store", () => {
  const hour = 3_600_000;
  const times = (now: number) => ({ now, leaseMs: 60_000, windowMs: 24 * hour });

  it("forgets an answer once its window ends: the same key then runs again", async () => {
    const store = testStore();
    const scope = scopeOf("chat", crypto.randomUUID());
    const hash = await requestHash("POST", "http://aptix.test/context/sessions", new ArrayBuffer(0));
    const t0 = Date.now();
    const first = await store.claim(scope, hash, times(t0));
    if (first.kind !== "claimed") throw new Error(first.kind);
    await store.complete(scope, first.claim, { status: 201, headers: {}, body: "{}" });
    expect((await store.claim(scope, hash, times(t0 + 24 * hour - 1))).kind).toBe("done");
    expect((await store.claim(scope, hash, times(t0 + 24 * hour))).kind).toBe("claimed");
  });

  it("frees the key of a first request whose lease expired (its worker died mid-request)", async () => {
    const store = testStore();
    const scope = scopeOf("chat", crypto.randomUUID());
    const t0 = Date.now();
    expect((await store.claim(scope, "h", times(t0))).kind).toBe("claimed");
    expect((await store.claim(scope, "h", times(t0 + 59_999))).kind).toBe("in_flight");
    expect((await store.claim(scope, "h", times(t0 + 60_000))).kind).toBe("claimed");
  });

  it("keeps answers sealed: the stored row does not hold the answer's text", async () => {
    const store = testStore();
    const scope = scopeOf("chat", crypto.randomUUID());
    const claim = await store.claim(scope, "h", times(Date.now()));
    if (claim.kind !== "claimed") throw new Error(claim.kind);
    await store.complete(scope, claim.claim, { status: 201, headers: {}, body: '{"secret":"whsec_shown_once"}' });
    const row = await env.DB.prepare("SELECT answer FROM idempotency_keys WHERE idempotency_key = ?")
      .bind(scope.key)
      .first<{ answer: string }>();
    expect(row?.answer).not.toContain("whsec_shown_once");
    const replayed = await store.claim(scope, "h", times(Date.now()));
    expect(replayed.kind === "done" && replayed.answer.body).toBe('{"secret":"whsec_shown_once"}');
  });
});

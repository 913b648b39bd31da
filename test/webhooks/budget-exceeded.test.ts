// A model call the org's budget refuses publishes `budget.exceeded`: the org's endpoint gets which limit it was (the
// org's or a key's, its kind, the limit, the period), signed, and no secret.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { BASE_URL, newChatKey, worker } from "../passthrough/harness";
import { receivedAtLeast, receiverUrl } from "./fixtures";

describe("the budget.exceeded event", () => {
  it("is delivered to the org's endpoint when its budget refuses a call, naming the limit", async () => {
    const org = `org-budget-${crypto.randomUUID()}`;
    const key = await newChatKey(org, ["chat", "admin"]);
    const as = (method: string, path: string, body: unknown) =>
      worker.fetch(`http://localhost${path}`, {
        method,
        headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const target = receiverUrl("budget");
    const created = await as("POST", "/context/webhooks", { url: target.url, events: ["budget.exceeded"] });
    const { secret } = (await created.json()) as { secret: string };
    expect((await as("PUT", "/admin/budget", { tokensPerDay: 1 })).status).toBe(200);

    const refused = await worker.fetch(`${BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(refused.status).toBe(429);

    const [delivery] = await receivedAtLeast(target.name, 1);
    expect(new Webhook(secret).verify(delivery?.body ?? "", delivery?.headers ?? {})).toEqual({
      type: "budget.exceeded",
      timestamp: expect.any(String),
      data: { org, scope: "org", kind: "tokens_per_day", limit: 1, period: "day" },
    });
  });
});

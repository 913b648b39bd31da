// The conversation on the loop's path is read back from its newest message, by index, only as far as a model
// request's history reaches: an object woken in a long session reads what it sends, not the whole conversation.
// A summary is stored only while the range it covers is still the one to replace.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { boundedHistory } from "../../src/agent/conversation";
import { SessionStore } from "../../src/session/session-store";

const identity = { sessionId: "s-reads", org: "org-a", user: "user-a", mode: "general" };

/** The object's storage, counting the message rows its statements return. */
function countingMessageRows(storage: DurableObjectStorage): { storage: DurableObjectStorage; rows: () => number } {
  let rows = 0;
  const sql = new Proxy(storage.sql, {
    get(target, property) {
      if (property !== "exec") return Reflect.get(target, property, target);
      return (query: string, ...bindings: SqlStorageValue[]) => {
        const cursor = target.exec(query, ...bindings);
        if (!/FROM messages/.test(query) || /COUNT|MAX/.test(query)) return cursor;
        const read = cursor.toArray();
        rows += read.length;
        return { toArray: () => read, one: () => read[0] };
      };
    },
  });
  const counted = new Proxy(storage, {
    get(target, property) {
      if (property === "sql") return sql;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage: counted, rows: () => rows };
}

/** A session of `turns` stored turns (a user message and an answer each), written by the object's store. */
function longSession(storage: DurableObjectStorage, turns: number): void {
  const store = new SessionStore(storage);
  store.create(identity, null);
  for (let n = 1; n <= turns; n++) {
    store.appendMessage({
      turnId: `t${n}`,
      role: "user",
      content: `question ${n} ${"x".repeat(200)}`,
      kind: "message",
    });
    store.appendMessage({ turnId: `t${n}`, role: "assistant", content: `answer ${n}`, kind: "answer" });
  }
}

async function inObject<R>(body: (storage: DurableObjectStorage) => R): Promise<R> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  return runInDurableObject(stub, (_instance, state) => body(state.storage));
}

describe("conversation reads", () => {
  it("reads one page of messages, not the whole conversation, for a woken object's first history", async () => {
    const { sent, rows } = await inObject((storage) => {
      longSession(storage, 500);
      const counted = countingMessageRows(storage);
      const woken = new SessionStore(counted.storage);
      const history = boundedHistory(woken.newestFirst(), "t500", 600);
      return { sent: history.length, rows: counted.rows() };
    });
    expect(sent).toBeGreaterThan(4);
    expect(rows).toBeLessThanOrEqual(64);
  });

  it("sends the summary and only the turns after it, reading none of the messages it covers", async () => {
    const { history, rows } = await inObject((storage) => {
      longSession(storage, 10);
      new SessionStore(storage).saveSummary({ fromSeq: 1, toSeq: 18, text: "Nine turns." }, null);
      const counted = countingMessageRows(storage);
      const woken = new SessionStore(counted.storage);
      const history = boundedHistory(woken.newestFirst(), "t10", 10_000, woken.summary());
      return { history: history.map((m) => m.content), rows: counted.rows() };
    });
    expect(history).toEqual([
      "Summary of the earlier conversation:\nNine turns.",
      `question 10 ${"x".repeat(200)}`,
      "answer 10",
    ]);
    expect(rows).toBeLessThanOrEqual(20);
  });

  it("stores a summary only while the summary it takes in is still the newest", async () => {
    const outcome = await inObject((storage) => {
      longSession(storage, 6);
      const store = new SessionStore(storage);
      const first = store.saveSummary({ fromSeq: 1, toSeq: 4, text: "Two turns." }, null);
      // Made from the conversation before the first was stored: its range is no longer the one to replace.
      const stale = store.saveSummary({ fromSeq: 1, toSeq: 6, text: "Three turns." }, null);
      const next = store.saveSummary({ fromSeq: 1, toSeq: 6, text: "Three turns." }, store.summary());
      return { first, stale, next, newest: store.summary()?.text };
    });
    expect(outcome).toEqual({ first: true, stale: false, next: true, newest: "Three turns." });
  });
});

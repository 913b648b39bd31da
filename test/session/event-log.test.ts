// The event log's newest seq: read from storage once, then kept by the log (its only writer) as frames are
// appended and old ones pruned, so a streamed token costs no read.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/session/event-log";
import type { LoggedFrame } from "../../src/wire/frames";

const frame = (turnId: string, text: string): LoggedFrame => ({ type: "assistant_delta", turnId, text });

/** The object's SQL, counting the statements that read the newest seq. */
function countingMaxReads(sql: SqlStorage): { sql: SqlStorage; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(sql, {
    get(target, property) {
      if (property !== "exec") return Reflect.get(target, property, target);
      return (query: string, ...bindings: SqlStorageValue[]) => {
        if (query.includes("MAX(seq)")) reads++;
        return target.exec(query, ...bindings);
      };
    },
  });
  return { sql: counted, reads: () => reads };
}

async function inObject<R>(body: (sql: SqlStorage) => R): Promise<R> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  return runInDurableObject(stub, (_instance, state) => body(state.storage.sql));
}

describe("the event log's newest seq", () => {
  it("is read from storage once, however many frames are appended and asked about", async () => {
    const { seqs, reads } = await inObject((sql) => {
      const counting = countingMaxReads(sql);
      const log = new EventLog(counting.sql);
      const seqs = [log.lastSeq()];
      for (const text of ["a", "b", "c"]) {
        log.append(frame("t1", text));
        seqs.push(log.lastSeq());
      }
      return { seqs, reads: counting.reads() };
    });
    expect(seqs).toEqual([0, 1, 2, 3]);
    expect(reads).toBe(1);
  });

  it("is what a log opened anew on the same storage reads", async () => {
    const { kept, read } = await inObject((sql) => {
      const log = new EventLog(sql);
      for (const text of ["a", "b"]) log.append(frame("t1", text));
      log.append(frame("t1", "c"), 7);
      return { kept: log.lastSeq(), read: new EventLog(sql).lastSeq() };
    });
    expect(kept).toBe(7);
    expect(read).toBe(7);
  });

  it("stays the newest seq after old frames are pruned", async () => {
    const { kept, read, remaining } = await inObject((sql) => {
      const log = new EventLog(sql, 2);
      for (const text of ["a", "b", "c", "d", "e"]) log.append(frame("old", text));
      log.prune(null);
      return { kept: log.lastSeq(), read: new EventLog(sql, 2).lastSeq(), remaining: log.since(0).frames.length };
    });
    expect(remaining).toBe(2);
    expect(kept).toBe(5);
    expect(read).toBe(5);
  });
});

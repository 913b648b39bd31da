// The session store keeps the open turn it last read or wrote: a request asks for it ten times before its
// first model call, and each read must not cost a statement, while every read still returns what storage holds.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { TurnState } from "../../src/agent/turn-store";
import { SessionStore } from "../../src/session/session-store";

const identity = { sessionId: "s-store", org: "org-a", user: "user-a", mode: "general" };
const turn = (turnId: string): TurnState => ({ turnId, startedAt: 1, iterations: 0, parseFailures: 0, batch: null });

/** The object's storage, counting the statements that read the session row, where the open turn is. */
function countingTurnReads(storage: DurableObjectStorage): { storage: DurableObjectStorage; reads: () => number } {
  let reads = 0;
  const sql = new Proxy(storage.sql, {
    get(target, property) {
      if (property !== "exec") return Reflect.get(target, property, target);
      return (query: string, ...bindings: SqlStorageValue[]) => {
        if (/^SELECT .*turn_json.* FROM session/.test(query)) reads++;
        return target.exec(query, ...bindings);
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
  return { storage: counted, reads: () => reads };
}

async function inObject<R>(body: (storage: DurableObjectStorage) => R): Promise<R> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  return runInDurableObject(stub, (_instance, state) => body(state.storage));
}

/** What storage itself holds as the open turn. */
function storedTurn(storage: DurableObjectStorage): TurnState | null {
  const row = storage.sql.exec<{ turn_json: string | null }>("SELECT turn_json FROM session WHERE id = 1").one();
  return row.turn_json === null ? null : (JSON.parse(row.turn_json) as TurnState);
}

describe("the session store's open turn", () => {
  it("costs no statement to read after the store wrote it, however often it is asked for", async () => {
    const reads = await inObject((storage) => {
      const counting = countingTurnReads(storage);
      const store = new SessionStore(counting.storage);
      store.create(identity, null);
      store.turn();
      store.saveTurn("running", turn("t1"));
      for (let i = 0; i < 10; i++) store.turn();
      return counting.reads();
    });
    expect(reads).toBe(0);
  });

  it("is read from storage once by a store on an object whose turn it did not write", async () => {
    const { reads, read } = await inObject((storage) => {
      const writer = new SessionStore(storage);
      writer.create(identity, null);
      writer.saveTurn("running", turn("t1"));
      // Another storage object for the same database: as an object that has just started sees it.
      const counting = countingTurnReads(storage);
      const store = new SessionStore(counting.storage);
      const read = store.turn();
      for (let i = 0; i < 10; i++) store.turn();
      return { reads: counting.reads(), read };
    });
    expect(reads).toBe(1);
    expect(read?.turnId).toBe("t1");
  });

  it("is what storage holds after each write: none at creation, the saved turn, none once the turn ends", async () => {
    const seen = await inObject((storage) => {
      const store = new SessionStore(storage);
      const pairs: { kept: TurnState | null; stored: TurnState | null }[] = [];
      const look = () => pairs.push({ kept: store.turn(), stored: storedTurn(storage) });
      store.create(identity, null);
      look();
      store.saveTurn("running", turn("t1"));
      look();
      store.saveTurn("awaiting_approval", { ...turn("t1"), iterations: 1, pauseExpiresAt: 42 });
      look();
      store.saveTurn("idle", null);
      look();
      return pairs;
    });
    for (const { kept, stored } of seen) expect(kept).toEqual(stored);
    expect(seen.map((p) => p.kept?.pauseExpiresAt ?? p.kept?.turnId ?? null)).toEqual([null, "t1", 42, null]);
  });

  it("keeps no turn for a session that does not exist yet: a turn saved with no row is not read back", async () => {
    const { before, saved, created } = await inObject((storage) => {
      const store = new SessionStore(storage);
      const before = store.turn();
      store.saveTurn("running", turn("t0"));
      const saved = store.turn();
      store.create(identity, null);
      return { before, saved, created: store.turn() };
    });
    expect([before, saved, created]).toEqual([null, null, null]);
  });

  it("gives each reader a turn of its own: changing one read changes neither storage nor the next read", async () => {
    const { next, stored } = await inObject((storage) => {
      const store = new SessionStore(storage);
      store.create(identity, null);
      store.saveTurn("running", turn("t1"));
      const first = store.turn();
      if (first) first.iterations = 99;
      return { next: store.turn(), stored: storedTurn(storage) };
    });
    expect(next?.iterations).toBe(0);
    expect(stored?.iterations).toBe(0);
  });
});

describe("the session store's rows", () => {
  it("are parsed on the way in: a stored turn that is not what the code wrote fails, naming the field", async () => {
    const problem = await inObject((storage) => {
      const store = new SessionStore(storage);
      store.create(identity, null);
      storage.sql.exec(`UPDATE session SET turn_json = '{"turnId":"t1","startedAt":"yesterday"}' WHERE id = 1`);
      try {
        new SessionStore(storage).turn();
        return null;
      } catch (error) {
        return error instanceof Error ? [error.name, error.message] : null;
      }
    });
    expect(problem?.[0]).toBe("CorruptSessionRowError");
    expect(problem?.[1]).toMatch(/^A stored session row is corrupt: turn_json\.startedAt /);
  });

  it("are parsed on the way in: a stored tool call of an unknown state fails, naming the field", async () => {
    const problem = await inObject((storage) => {
      const store = new SessionStore(storage);
      store.create(identity, null);
      storage.sql.exec(
        `INSERT INTO tool_calls (turn_id, id, batch, position, data_json) VALUES ('t1', 'c1', 1, 0, '{"state":"lost"}')`,
      );
      try {
        store.toolCalls("t1");
        return null;
      } catch (error) {
        return error instanceof Error ? error.message : null;
      }
    });
    expect(problem).toMatch(/^A stored tool call is corrupt: \w+ /);
  });
});

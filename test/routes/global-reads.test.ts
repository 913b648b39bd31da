// Global reads: every request reads D1 through one session of its Sessions API, started at the bookmark the
// client carried (X-D1-Bookmark) and answered with the session's own; new session objects get a location hint
// from the request's continent.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BOOKMARK_HEADER, BookmarkedDb } from "../../src/db";
import { locationHintFor } from "../../src/session/location-hint";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { workerWith } from "../passthrough/harness";

/** env.DB, recording the constraint or bookmark each D1 session was started with. */
function recordingDb(started: string[]): D1Database {
  return new Proxy(env.DB, {
    get(target, property) {
      if (property === "withSession") {
        return (constraint: string) => {
          started.push(constraint);
          return target.withSession(constraint);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** env.AGENT_SESSION, recording the location hint each object was asked for with. */
function recordingSessions(hints: (string | undefined)[]): typeof env.AGENT_SESSION {
  return new Proxy(env.AGENT_SESSION, {
    get(target, property) {
      if (property === "get") {
        return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => {
          hints.push(options?.locationHint);
          return target.get(id, options);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const modeBody = {
  displayName: "Release Notes",
  description: "Writing release notes.",
  systemPromptSummary: "Write release notes.",
  systemPrompt: "You are Aptix in Release Notes mode. Write short release notes.",
  humanRoleHints: ["release manager"],
  exampleUtterances: ["Write the notes for 2.1."],
  tools: ["agent_hello_world"],
};

describe("reads through D1 sessions", () => {
  it("answers a request with its D1 session's bookmark", async () => {
    const response = await workerWith().fetch("http://aptix.test/modes", { headers: authHeaders() });
    expect(response.status).toBe(200);
    expect(response.headers.get(BOOKMARK_HEADER)).toMatch(/^[0-9a-f]+(-[0-9a-f]+)+$/);
  });

  it("reads anywhere (first-unconstrained) when the client sends no bookmark", async () => {
    const started: string[] = [];
    await workerWith({ DB: recordingDb(started) }).fetch("http://aptix.test/modes", { headers: authHeaders() });
    expect(started).toEqual(["first-unconstrained"]);
  });

  it("carries an admin write's bookmark: the next read starts at it, sees the write, and answers a bookmark as new", async () => {
    const started: string[] = [];
    const app = workerWith({ DB: recordingDb(started) });
    const write = await app.fetch("http://aptix.test/admin/modes/release_notes_bookmark", {
      method: "PUT",
      headers: { ...authHeaders(TEST_KEYS.admin.key), "content-type": "application/json" },
      body: JSON.stringify(modeBody),
    });
    expect(write.status).toBeLessThan(300);
    const written = write.headers.get(BOOKMARK_HEADER) ?? "";
    expect(written).not.toBe("");

    const read = await app.fetch("http://aptix.test/modes", {
      headers: { ...authHeaders(), [BOOKMARK_HEADER]: written },
    });
    const { modes } = (await read.json()) as { modes: { key: string }[] };
    expect(started.at(-1)).toBe(written);
    expect(modes.map((m) => m.key)).toContain("release_notes_bookmark");
    expect((read.headers.get(BOOKMARK_HEADER) ?? "") >= written).toBe(true);
  });

  it("looks a key the nearest replica does not know up at the primary before refusing it", async () => {
    const started: string[] = [];
    const response = await workerWith({ DB: recordingDb(started) }).fetch("http://aptix.test/modes", {
      headers: { authorization: "Bearer sk-never-issued" },
    });
    expect(response.status).toBe(401);
    expect(started).toEqual(["first-unconstrained", "first-primary"]);
  });

  it("takes an empty bookmark header for none", async () => {
    const started: string[] = [];
    const response = await workerWith({ DB: recordingDb(started) }).fetch("http://aptix.test/modes", {
      headers: { ...authHeaders(), [BOOKMARK_HEADER]: "" },
    });
    expect(response.status).toBe(200);
    expect(started).toEqual(["first-unconstrained"]);
  });

  it("refuses a bookmark header that is not a bookmark, naming the header", async () => {
    const response = await workerWith().fetch("http://aptix.test/modes", {
      headers: { ...authHeaders(), [BOOKMARK_HEADER]: "'; DROP TABLE modes" },
    });
    const body = (await response.json()) as { error: { code: string; param: string } };
    expect(response.status).toBe(400);
    expect(body.error).toMatchObject({ code: "invalid_request", param: BOOKMARK_HEADER });
  });
});

describe("a session object's reads", () => {
  it("move on to a caller's newer bookmark, and stay where they are for an older one or none", async () => {
    const started: string[] = [];
    const db = new BookmarkedDb(recordingDb(started));
    await db.prepare("SELECT 1").first();
    const newer = "ffffffff-00000000-00000000-00000000000000000000000000000000";
    db.advance(newer);
    db.advance("00000000-00000001-00000000-00000000000000000000000000000000");
    db.advance(null);
    expect(started).toEqual(["first-unconstrained", newer]);
  });
});

describe("where a new session's object is placed", () => {
  it("chooses the region of the request's continent, and the side of it by longitude", () => {
    expect(locationHintFor({ continent: "EU", longitude: "2.35" })).toBe("weur");
    expect(locationHintFor({ continent: "EU", longitude: "30.5" })).toBe("eeur");
    expect(locationHintFor({ continent: "NA", longitude: "-122.4" })).toBe("wnam");
    expect(locationHintFor({ continent: "NA", longitude: "-74.0" })).toBe("enam");
    expect(locationHintFor({ continent: "SA" })).toBe("sam");
    expect(locationHintFor({ continent: "AS", country: "JP" })).toBe("apac");
    expect(locationHintFor({ continent: "AS", country: "AE" })).toBe("me");
    expect(locationHintFor({ continent: "OC" })).toBe("oc");
    expect(locationHintFor({ continent: "AF" })).toBe("afr");
  });

  it("gives no hint when the request says nothing of where it comes from (a local run)", () => {
    expect(locationHintFor(undefined)).toBeUndefined();
    expect(locationHintFor({ continent: "AN" })).toBeUndefined();
  });

  it("creates a session's object with the hint of the request's continent", async () => {
    const hints: (string | undefined)[] = [];
    const app = workerWith({ AGENT_SESSION: recordingSessions(hints) });
    const request = new Request("http://aptix.test/context/sessions", {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json" },
      body: "{}",
      cf: { continent: "EU", country: "DE", longitude: "13.4" },
    });
    const response = await app.fetch(request);
    expect(response.status).toBe(201);
    expect(hints).toEqual(["weur"]);
  });
});

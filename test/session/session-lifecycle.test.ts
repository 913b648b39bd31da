// Creating and reading sessions: default mode, unknown modes, ownership by org.
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, getSession } from "../fixtures/sessions";

describe("POST /context/sessions", () => {
  it("creates a session in the default mode", async () => {
    const { status, json } = await call("POST", "/context/sessions", {});
    expect(status).toBe(201);
    const body = json as { sessionId: string; mode: string; status: string; createdAt: string };
    expect(body.sessionId).toMatch(/^[0-9a-f]{64}$/);
    expect(body).toMatchObject({ mode: "general", status: "idle" });
    expect(Number.isNaN(Date.parse(body.createdAt))).toBe(false);
  });

  it("creates a session in a chosen mode", async () => {
    const session = await getSession(await createSession("workspace"));
    expect(session.mode).toBe("workspace");
  });

  it("refuses an unknown mode with a 400 that lists the known keys", async () => {
    const { status, json } = await call("POST", "/context/sessions", { mode: "astrology" });
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({
      message: "Unknown mode 'astrology'. Known modes: general, ddr_authoring, workspace.",
      code: "unknown_mode",
      param: "mode",
    });
  });
});

describe("GET /context/sessions/:sessionId", () => {
  it("answers the whole session with its mode, status, history, pending calls and conversation", async () => {
    const session = await getSession(await createSession());
    expect(session).toMatchObject({
      mode: "general",
      status: "idle",
      modeHistory: [],
      pendingToolCalls: [],
      parentSessionId: null,
      conversation: [],
    });
  });

  it("answers 404 for a session id that does not exist or cannot exist", async () => {
    for (const id of ["0".repeat(64), "not-an-id"]) {
      const { status, json } = await call("GET", `/context/sessions/${id}`);
      expect(status).toBe(404);
      expect((json as ErrorBody).error.code).toBe("session_not_found");
    }
  });

  it("answers another org 404 on every route, as if the session did not exist", async () => {
    const id = await createSession();
    const other = TEST_KEYS.otherOrg.key;
    const attempts = [
      call("GET", `/context/sessions/${id}`, undefined, other),
      call("POST", `/context/sessions/${id}/messages`, { content: "hi" }, other),
      call("POST", `/context/sessions/${id}/approvals`, { decisions: [{ toolCallId: "x", approved: true }] }, other),
      call("POST", `/context/sessions/${id}/tool-results`, { results: [{ toolCallId: "x", resultJson: "{}" }] }, other),
    ];
    for (const { status, json } of await Promise.all(attempts)) {
      expect(status).toBe(404);
      expect((json as ErrorBody).error.message).toBe(`Session '${id}' not found.`);
    }
    expect((await getSession(id)).conversation).toEqual([]);
  });

  it("refuses a message body without content, naming the field", async () => {
    const id = await createSession();
    const { status, json } = await call("POST", `/context/sessions/${id}/messages`, { text: "hi" });
    expect(status).toBe(400);
    expect((json as ErrorBody).error.param).toBe("content");
  });
});

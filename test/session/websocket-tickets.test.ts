// WebSocket tickets: single-use, 60 s, bound to the session and its org; refused before the upgrade.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TicketStore } from "../../src/session/tickets";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody } from "../fixtures/sessions";
import { connect, issueTicket, openSocket } from "../fixtures/socket";

async function refusal(response: Response) {
  return {
    status: response.status,
    code: ((await response.json()) as ErrorBody).error.code,
    socket: response.webSocket,
  };
}

describe("WebSocket tickets", () => {
  it("issues a ticket that opens the session's socket, which starts with session_state", async () => {
    const id = await createSession();
    const { json } = await call("POST", `/context/sessions/${id}/ws-ticket`);
    expect((json as { ticket: string; expiresAt: string }).ticket).toMatch(/^wst_[A-Za-z0-9_-]{43}$/);
    const socket = await openSocket(id);
    expect(socket.frames[0]).toMatchObject({
      type: "session_state",
      sessionId: id,
      mode: "general",
      status: "idle",
      turnInFlight: false,
      lastSeq: 0,
    });
    socket.close();
  });

  it("refuses a socket without a ticket, or with a made-up one", async () => {
    const id = await createSession();
    for (const ticket of ["", "wst_made_up"]) {
      expect(await refusal(await connect(id, ticket))).toMatchObject({
        status: 401,
        code: "invalid_ticket",
        socket: null,
      });
    }
  });

  it("refuses a ticket the second time", async () => {
    const id = await createSession();
    const ticket = await issueTicket(id);
    const first = await connect(id, ticket);
    expect(first.status).toBe(101);
    first.webSocket?.accept();
    first.webSocket?.close();
    expect(await refusal(await connect(id, ticket))).toMatchObject({ status: 401, code: "invalid_ticket" });
  });

  it("refuses an expired ticket", async () => {
    const id = await createSession();
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    const { ticket } = await runInDurableObject(stub, (_instance, state) =>
      new TicketStore(state.storage.sql).issue(
        { org: TEST_KEYS.chat.org, user: TEST_KEYS.chat.user, keyId: "chat" },
        Date.now() - 61_000,
      ),
    );
    expect(await refusal(await connect(id, ticket))).toMatchObject({ status: 401, code: "invalid_ticket" });
  });

  it("refuses a ticket for another session", async () => {
    const [a, b] = [await createSession(), await createSession()];
    expect(await refusal(await connect(b, await issueTicket(a)))).toMatchObject({ status: 401 });
  });

  it("gives another org no ticket: 404, as if the session did not exist", async () => {
    const id = await createSession();
    const { status } = await call("POST", `/context/sessions/${id}/ws-ticket`, undefined, TEST_KEYS.otherOrg.key);
    expect(status).toBe(404);
  });

  it("answers a socket to an unknown session exactly as a bad ticket, telling a caller nothing of which sessions exist", async () => {
    const id = await createSession();
    const badTicket = await connect(id, "wst_made_up");
    const bodies = [badTicket, await connect("0".repeat(64), "wst_made_up"), await connect("not-an-id", "wst_made_up")];
    const answers = await Promise.all(bodies.map(async (r) => ({ status: r.status, body: await r.json() })));
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0]?.status).toBe(401);
  });

  it("answers an unknown session's socket exactly as a known one's when a valid ticket of another session is used", async () => {
    const known = await createSession();
    const other = await createSession();
    const unknownSession = await connect("f".repeat(64), await issueTicket(other));
    const wrongSession = await connect(known, await issueTicket(other));
    expect([unknownSession.status, await unknownSession.json()]).toEqual([
      wrongSession.status,
      await wrongSession.json(),
    ]);
  });

  it("answers a plain GET without the upgrade header with 426", async () => {
    const id = await createSession();
    const response = await exports.default.fetch(
      `http://aptix.test/context/sessions/${id}/ws?ticket=${await issueTicket(id)}`,
    );
    expect(response.status).toBe(426);
  });
});

// A WebSocket's rights are its holder's as they stand now, not as they stood when it opened: a frame from a socket
// whose key was revoked, or whose admin was narrowed to a member since, is refused (session_not_found) and the socket
// closed with 4404; a socket that only listens is checked as each turn starts, and closed the same way.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createSession } from "../fixtures/sessions";
import { openSocket, type TestSocket } from "../fixtures/socket";
import { newChatKey, newUserKey, type TestKey } from "../passthrough/harness";

const revoke = (key: TestKey) =>
  env.DB.prepare("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00Z' WHERE id = ?").bind(key.keyId).run();

/** Resolves with the error frame the socket was sent and the code it was closed with. */
async function refusal(socket: TestSocket): Promise<{ code: unknown; closedWith: number }> {
  const error = await socket.waitForType("error");
  return { code: error.code, closedWith: await socket.closed };
}

describe("a socket's standing", () => {
  it("refuses a message from a socket whose key was revoked after it opened, and closes it with 4404", async () => {
    const owner = await newUserKey(`org-socket-${crypto.randomUUID()}`);
    const sessionId = await createSession(undefined, owner.key);
    const socket = await openSocket(sessionId, undefined, owner.key);
    await revoke(owner);
    socket.send({ type: "user_message", content: "still here?", clientMessageId: "m1" });
    expect(await refusal(socket)).toEqual({ code: "session_not_found", closedWith: 4404 });
    expect(socket.frames.some((frame) => frame.type === "turn_started")).toBe(false);
  });

  it("refuses a resume from an admin's socket in a member's session once the admin's key is narrowed to chat", async () => {
    const org = `org-socket-${crypto.randomUUID()}`;
    const [admin, otherAdmin, member] = [
      await newChatKey(org, ["chat", "admin"]),
      await newChatKey(org, ["chat", "admin"]),
      await newUserKey(org),
    ];
    const sessionId = await createSession(undefined, member.key);
    const socket = await openSocket(sessionId, undefined, admin.key);
    const narrowed = await call("PATCH", `/admin/keys/${admin.keyId}`, { scopes: ["chat"] }, otherAdmin.key);
    expect(narrowed.status).toBe(200);
    socket.send({ type: "resume", afterSeq: 0 });
    expect(await refusal(socket)).toEqual({ code: "session_not_found", closedWith: 4404 });
  });

  it("lets an admin's socket in a member's session act while the admin still is one", async () => {
    const org = `org-socket-${crypto.randomUUID()}`;
    const admin = await newChatKey(org, ["chat", "admin"]);
    const member = await newUserKey(org);
    const sessionId = await createSession(undefined, member.key);
    const socket = await openSocket(sessionId, undefined, admin.key);
    socket.send({ type: "user_message", content: "hello from an admin", clientMessageId: "m1" });
    expect((await socket.waitForType("turn_started")).type).toBe("turn_started");
    socket.close();
  });

  it("closes a socket that only listens, its key revoked, as the owner's next turn starts", async () => {
    const org = `org-socket-${crypto.randomUUID()}`;
    const owner = await newUserKey(org);
    const sessionId = await createSession(undefined, owner.key);
    // The owner's second key, for the listening socket.
    const second = await newChatKey(org);
    await env.DB.prepare("UPDATE api_keys SET user_id = (SELECT user_id FROM api_keys WHERE id = ?) WHERE id = ?")
      .bind(owner.keyId, second.keyId)
      .run();
    const listening = await openSocket(sessionId, undefined, second.key);
    await revoke(second);
    const sent = await call("POST", `/context/sessions/${sessionId}/messages`, { content: "a new turn" }, owner.key);
    expect(sent.status).toBe(200);
    expect(await refusal(listening)).toEqual({ code: "session_not_found", closedWith: 4404 });
  });
});

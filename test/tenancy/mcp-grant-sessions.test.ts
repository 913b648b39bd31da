// An MCP client a member authorized acts as that member: /mcp lists their sessions only (the consent page says
// "your sessions"), never another member's, and reads or writes none of theirs.
import { beforeEach, describe, expect, it } from "vitest";
import { freshDatabase } from "../fixtures/database";
import { TEST_KEYS } from "../fixtures/keys";
import { authorizedClient, worker } from "../fixtures/mcp-oauth";
import { createSession } from "../fixtures/sessions";

beforeEach(freshDatabase);

/** One JSON-RPC call to /mcp with `token` (an OAuth access token or a key); its result, or its error. */
async function rpc(token: string, method: string, params: Record<string, unknown> = {}) {
  const response = await worker("/mcp", {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { message: string } };
}

const uris = (result: Record<string, unknown> | undefined) =>
  ((result?.resources ?? []) as { uri: string }[]).map((r) => r.uri).sort();

describe("an MCP grant of a member", () => {
  it("lists that member's sessions only", async () => {
    const mine = await createSession(undefined, TEST_KEYS.chat.key);
    const colleagues = await createSession(undefined, TEST_KEYS.otherMember.key);
    const admins = await createSession(undefined, TEST_KEYS.admin.key);
    const { tokens } = await authorizedClient(TEST_KEYS.chat.key, "Member's client");
    const listed = uris((await rpc(tokens.access_token, "resources/list")).result);
    expect(listed).toEqual([`aptix://sessions/${mine}`]);
    expect(listed).not.toContain(`aptix://sessions/${colleagues}`);
    expect(listed).not.toContain(`aptix://sessions/${admins}`);
  });

  it("reads no other member's session, as if it did not exist", async () => {
    const colleagues = await createSession(undefined, TEST_KEYS.otherMember.key);
    const { tokens } = await authorizedClient(TEST_KEYS.chat.key, "Member's client");
    const read = await rpc(tokens.access_token, "resources/read", { uri: `aptix://sessions/${colleagues}` });
    expect(read.result).toBeUndefined();
    expect(read.error?.message).toContain("not found");
  });

  it("sends no message to another member's session", async () => {
    const colleagues = await createSession(undefined, TEST_KEYS.otherMember.key);
    const { tokens } = await authorizedClient(TEST_KEYS.chat.key, "Member's client");
    const sent = await rpc(tokens.access_token, "tools/call", {
      name: "send_message",
      arguments: { sessionId: colleagues, content: "hello" },
    });
    expect(sent.result).toMatchObject({ isError: true });
    expect(JSON.stringify(sent.result)).toContain("not found");
  });
});

describe("an admin's key on /mcp", () => {
  it("lists the admin's own sessions, as the door's resources are 'your sessions'", async () => {
    const admins = await createSession(undefined, TEST_KEYS.admin.key);
    await createSession(undefined, TEST_KEYS.chat.key);
    expect(uris((await rpc(TEST_KEYS.admin.key, "resources/list")).result)).toEqual([`aptix://sessions/${admins}`]);
  });
});

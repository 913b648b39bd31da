// A turn whose work throws something unforeseen (here: its mode's catalog row is corrupt) is ended as failed
// with internal_error, logged, and the session takes the next message; it never stays `running`.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetIsolateState } from "../../src/isolate-cache";
import { call, createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";

describe("a turn that fails unexpectedly", () => {
  it("ends failed with internal_error, and the session takes the next message", async () => {
    const mode = await mcpMode(["agent_hello_world"]);
    const id = await createSession(mode);
    await env.DB.prepare('UPDATE modes SET tools = \'{"not":"a list"}\' WHERE key = ?').bind(mode).run();
    // The mode as the session's creation read it is kept in the isolate for a while: the turn reads the corrupt row.
    forgetIsolateState();
    const broken = await call("POST", `/context/sessions/${id}/messages`, { content: "hello" });
    expect(broken.status).toBe(500);
    const session = await getSession(id);
    expect(session.status).toBe("idle");
    expect(session.turns.at(-1)).toMatchObject({ status: "failed", error: { code: "internal_error" } });

    await env.DB.prepare("UPDATE modes SET tools = '[]' WHERE key = ?").bind(mode).run();
    const script = await scriptUpstream([{ type: "completion", content: "fine now" }]);
    expect((await sendMessage(id, `again ${script.marker}`)).status).toBe("completed");
  });
});

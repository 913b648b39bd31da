// Client-final tools: the server preflights, the turn hands the call to the client, its result resumes the loop.
import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createSession, type ErrorBody, getSession, sendMessage, sendToolResults } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

type SentBody = { messages: { role: string; content: string | null }[] };
const read = (path: string) => ({ name: "workspace_read_file", arguments: JSON.stringify({ path }) });

async function pausedOnRead(extraSteps: { type: "completion"; content: string }[] = []) {
  const script = await scriptUpstream([{ type: "completion", toolCalls: [read("src/index.ts")] }, ...extraSteps]);
  const id = await createSession("workspace");
  const response = await sendMessage(id, `explain src/index.ts ${script.marker}`);
  return { script, id, response, callId: response.toolCalls[0]?.id ?? "" };
}

describe("client hand-off", () => {
  it("returns awaiting_client with the preflighted request for the client", async () => {
    const { response } = await pausedOnRead();
    expect(response.status).toBe("awaiting_client");
    expect(response.toolCalls[0]).toMatchObject({
      name: "workspace_read_file",
      isServerTool: true,
      wasExecuted: true,
      requiresClientExecution: true,
      requiresApproval: false,
    });
    expect(JSON.parse(response.toolCalls[0]?.resultJson ?? "")).toEqual({
      action: "read_file",
      path: "src/index.ts",
      maxBytes: 262144,
    });
  });

  it("resumes the loop with the client's result and answers", async () => {
    const { script, id, callId } = await pausedOnRead([{ type: "completion", content: "It exports the app." }]);
    const done = await sendToolResults(id, [
      { toolCallId: callId, resultJson: JSON.stringify({ path: "src/index.ts", content: "export default app;" }) },
    ]);
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ status: "completed", text: "It exports the app.", iterations: 2 });
    const sent = (await script.bodies()) as SentBody[];
    expect(JSON.parse(sent[1]?.messages.at(-1)?.content ?? "")).toEqual({
      path: "src/index.ts",
      content: "export default app;",
    });
  });

  it("passes a client's error to the model as the call's error", async () => {
    const { script, id, callId } = await pausedOnRead([{ type: "completion", content: "The file does not exist." }]);
    await sendToolResults(id, [{ toolCallId: callId, errorMessage: "ENOENT: no such file" }]);
    const sent = (await script.bodies()) as SentBody[];
    expect(JSON.parse(sent[1]?.messages.at(-1)?.content ?? "")).toEqual({ error: "ENOENT: no such file" });
  });

  it("refuses a path outside the workspace in the preflight, before any client sees it", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [read("../../etc/passwd"), read("/etc/passwd")] },
      { type: "completion", content: "I cannot read those." },
    ]);
    const response = await sendMessage(await createSession("workspace"), `read ${script.marker}`);
    expect(response.status).toBe("completed");
    expect(response.toolCalls.map((c) => c.errorMessage)).toEqual([
      "WorkspaceReadFileTool refused the path: '../../etc/passwd' leaves the workspace ('..' is not allowed).",
      "WorkspaceReadFileTool refused the path: '/etc/passwd' is absolute; use a path relative to the workspace root.",
    ]);
  });

  it("answers 409 for a result to an already-settled call, and changes nothing", async () => {
    const { id, callId } = await pausedOnRead([{ type: "completion", content: "Done." }]);
    const result = { toolCallId: callId, resultJson: JSON.stringify({ path: "src/index.ts", content: "x" }) };
    expect((await sendToolResults(id, [result])).status).toBe(200);
    const before = await getSession(id);
    const stale = await sendToolResults(id, [result]);
    expect(stale.status).toBe(409);
    expect(["nothing_pending", "tool_call_not_pending"]).toContain((stale.json as ErrorBody).error.code);
    expect((await getSession(id)).conversation).toEqual(before.conversation);
  });

  it("answers 409 for a result to an unknown call id while the turn waits", async () => {
    const { id } = await pausedOnRead();
    const stale = await sendToolResults(id, [{ toolCallId: "call_unknown", resultJson: "{}" }]);
    expect(stale.status).toBe(409);
    expect((stale.json as ErrorBody).error.code).toBe("tool_call_not_pending");
    expect((await getSession(id)).status).toBe("awaiting_client");
  });

  it("refuses a result that does not match the tool's declared result, naming the field", async () => {
    const { id, callId } = await pausedOnRead();
    const bad = await sendToolResults(id, [
      { toolCallId: callId, resultJson: JSON.stringify({ path: "src/index.ts" }) },
    ]);
    expect(bad.status).toBe(400);
    expect((bad.json as ErrorBody).error.message).toContain("'content'");
    expect((await getSession(id)).status).toBe("awaiting_client");
  });

  it("keeps mode, conversation, pending calls and status when the object is evicted, and resumes", async () => {
    const { id, callId } = await pausedOnRead([{ type: "completion", content: "Resumed after eviction." }]);
    const before = await getSession(id);
    await evictDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id)));
    const after = await getSession(id);
    expect(after).toEqual(before);
    expect(after.pendingToolCalls.map((c) => c.id)).toEqual([callId]);
    const done = await sendToolResults(id, [
      { toolCallId: callId, resultJson: JSON.stringify({ path: "src/index.ts", content: "x" }) },
    ]);
    expect((done.json as { text: string }).text).toBe("Resumed after eviction.");
  });
});

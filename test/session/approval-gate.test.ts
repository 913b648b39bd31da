// Tools that need approval pause the turn; all of a response's calls are approved or denied together.
import { describe, expect, it } from "vitest";
import {
  approve,
  call,
  createSession,
  type ErrorBody,
  getSession,
  sendMessage,
  sendToolResults,
} from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

type SentBody = { messages: { role: string; content: string | null; tool_call_id?: string }[] };
const write = (path: string, content: string) => ({
  name: "workspace_write_file",
  arguments: JSON.stringify({ path, content }),
});

describe("approval gates", () => {
  it("returns every call of a response that needs approval together, with status awaiting_approval", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        content: "I will write both files.",
        toolCalls: [write("a.txt", "A"), write("b.txt", "B")],
      },
    ]);
    const id = await createSession("workspace");
    const response = await sendMessage(id, `write two files ${script.marker}`);

    expect(response.status).toBe("awaiting_approval");
    expect(response.text).toBe("I will write both files.");
    // wasExecuted: the preflight (AGN-005 §5.3) ran before the calls were shown for approval.
    expect(response.toolCalls.map((c) => [c.name, c.requiresApproval, c.approval, c.wasExecuted])).toEqual([
      ["workspace_write_file", true, "pending", true],
      ["workspace_write_file", true, "pending", true],
    ]);
    const session = await getSession(id);
    expect(session.status).toBe("awaiting_approval");
    expect(session.pendingToolCalls.map((c) => c.id)).toEqual(response.toolCalls.map((c) => c.id));
  });

  it("runs approved calls, skips denied ones, and tells the model 'Tool call denied by the user' with the reason", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [write("a.txt", "A"), write("b.txt", "B")] },
      { type: "completion", content: "Wrote a.txt; b.txt was refused." },
    ]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write two files ${script.marker}`);
    const [a, b] = paused.toolCalls;

    const resumed = await approve(id, [
      { toolCallId: a?.id ?? "", approved: true },
      { toolCallId: b?.id ?? "", approved: false, reason: "not that one" },
    ]);
    expect(resumed.status).toBe(200);
    const afterApproval = resumed.json as {
      status: string;
      toolCalls: { approval: string; errorMessage: string | null; requiresClientExecution: boolean }[];
    };
    expect(afterApproval.status).toBe("awaiting_client");
    expect(afterApproval.toolCalls.map((c) => [c.approval, c.errorMessage])).toEqual([
      ["approved", null],
      ["denied", "Tool call denied by the user: not that one"],
    ]);

    const done = await sendToolResults(id, [
      { toolCallId: a?.id ?? "", resultJson: JSON.stringify({ path: "a.txt", bytesWritten: 1 }) },
    ]);
    expect((done.json as { status: string; text: string }).text).toBe("Wrote a.txt; b.txt was refused.");
    const sent = (await script.bodies()) as SentBody[];
    const results = sent[1]?.messages.filter((m) => m.role === "tool") ?? [];
    expect(results.map((m) => JSON.parse(m.content ?? ""))).toEqual([
      { path: "a.txt", bytesWritten: 1 },
      { error: "Tool call denied by the user: not that one" },
    ]);
  });

  it("tells the model 'Tool call denied by the user' without a reason when none is given", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [write("a.txt", "A")] },
      { type: "completion", content: "Understood, nothing written." },
    ]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write ${script.marker}`);
    const resumed = await approve(id, [{ toolCallId: paused.toolCalls[0]?.id ?? "", approved: false }]);
    expect((resumed.json as { status: string }).status).toBe("completed");
    const sent = (await script.bodies()) as SentBody[];
    expect(JSON.parse(sent[1]?.messages.at(-1)?.content ?? "")).toEqual({ error: "Tool call denied by the user" });
  });

  it("answers 409 for a decision on an unknown or settled call, and changes nothing", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write("a.txt", "A")] }]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write ${script.marker}`);
    const refused = await approve(id, [
      { toolCallId: paused.toolCalls[0]?.id ?? "", approved: true },
      { toolCallId: "call_made_up", approved: true },
    ]);
    expect(refused.status).toBe(409);
    expect((refused.json as ErrorBody).error.code).toBe("tool_call_not_pending");
    const session = await getSession(id);
    expect(session.status).toBe("awaiting_approval");
    expect(session.pendingToolCalls[0]?.approval).toBe("pending");
  });

  it("refuses a new message while approvals are pending", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write("a.txt", "A")] }]);
    const id = await createSession("workspace");
    await sendMessage(id, `write ${script.marker}`);
    const refused = await call("POST", `/context/sessions/${id}/messages`, { content: "something else" });
    expect(refused.status).toBe(409);
    expect((refused.json as ErrorBody).error.code).toBe("session_awaiting_input");
  });
});

describe("checks before approval", () => {
  it("refuses a write outside the workspace in its preflight, so it never reaches the approval dialog", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [write("../../etc/passwd", "root::0:0")] },
      { type: "completion", content: "I cannot write there." },
    ]);
    const id = await createSession("workspace");
    const response = await sendMessage(id, `write it ${script.marker}`);
    expect(response.status).toBe("completed");
    expect(response.toolCalls[0]).toMatchObject({ approval: null, wasExecuted: false, requiresClientExecution: true });
    expect(response.toolCalls[0]?.errorMessage).toBe(
      "WorkspaceWriteFileTool refused the path: '../../etc/passwd' leaves the workspace ('..' is not allowed).",
    );
    const session = await getSession(id);
    expect(session.pendingToolCalls).toEqual([]);
  });

  it("shows the preflight's prepared request with a call that waits for approval", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write("./docs//a.md", "A")] }]);
    const paused = await sendMessage(await createSession("workspace"), `write ${script.marker}`);
    expect(paused.status).toBe("awaiting_approval");
    expect(JSON.parse(paused.toolCalls[0]?.resultJson ?? "")).toMatchObject({
      action: "write_file",
      path: "docs/a.md",
    });
  });

  it("hands the approved call's prepared request to the client without running the preflight again", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write("a.txt", "A")] }]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write ${script.marker}`);
    const approved = await approve(id, [{ toolCallId: paused.toolCalls[0]?.id ?? "", approved: true }]);
    const body = approved.json as { status: string; toolCalls: { resultJson: string; approval: string }[] };
    expect(body.status).toBe("awaiting_client");
    expect(body.toolCalls[0]?.approval).toBe("approved");
    expect(body.toolCalls[0]?.resultJson).toBe(paused.toolCalls[0]?.resultJson);
  });

  it("refuses a client result for a file other than the one the approved write asked for", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write("a.txt", "A")] }]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write ${script.marker}`);
    const callId = paused.toolCalls[0]?.id ?? "";
    await approve(id, [{ toolCallId: callId, approved: true }]);
    const result = await sendToolResults(id, [
      { toolCallId: callId, resultJson: JSON.stringify({ path: "b.txt", bytesWritten: 1 }) },
    ]);
    expect(result.status).toBe(400);
    expect((result.json as ErrorBody).error).toMatchObject({
      code: "invalid_tool_result",
      param: "results.0.resultJson",
    });
    expect((await getSession(id)).status).toBe("awaiting_client");
  });

  it("refuses a decision named twice with 400 naming the second one's toolCallId, and changes nothing", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write("a.txt", "A")] }]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write ${script.marker}`);
    const decision = { toolCallId: paused.toolCalls[0]?.id ?? "", approved: true };
    const answer = await approve(id, [decision, decision]);
    expect([answer.status, (answer.json as ErrorBody).error]).toMatchObject([
      400,
      { code: "duplicate_tool_call_id", param: "decisions.1.toolCallId" },
    ]);
    expect((await getSession(id)).status).toBe("awaiting_approval");
  });
});

// A session pinned to a mode version (POST /context/sessions with modeVersion, for evals): its turns run with that
// version's snapshot, its view says so, and only an org admin may pin.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import type { SessionView } from "../../src/wire/session";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { freshDatabase } from "../fixtures/database";
import { TEST_KEYS } from "../fixtures/keys";
import { call, type ErrorBody } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const admin = TEST_KEYS.admin.key;
const triage = (prompt: string) => ({
  displayName: "Triage",
  description: "Sorting tickets.",
  systemPrompt: prompt,
  tools: ["agent_hello_world"],
});

beforeAll(async () => {
  await freshDatabase();
  expect((await call("PUT", "/admin/modes/triage", triage("OLD PROMPT: sort by product."), admin)).status).toBe(201);
  expect((await call("PUT", "/admin/modes/triage", triage("NEW PROMPT: sort by urgency."), admin)).status).toBe(200);
});

async function pinned(version: number, key: string = admin) {
  return call("POST", "/context/sessions", { mode: "triage", modeVersion: version }, key);
}

describe("a session pinned to a mode version", () => {
  it("runs its turns with the version's prompt, not the current one", async () => {
    const created = await pinned(1);
    expect(created.status).toBe(201);
    const { sessionId } = created.json as { sessionId: string };
    const script = await scriptUpstream([{ type: "completion", content: "Sorted." }]);
    const sent = await call(
      "POST",
      `/context/sessions/${sessionId}/messages`,
      { content: `hi ${script.marker}` },
      admin,
    );
    expect((sent.json as AgentExecuteResponse).status).toBe("completed");
    const system = (await script.messagesOf(0)).find((m) => m.role === "system")?.content ?? "";
    expect(system).toContain("OLD PROMPT");
    expect(system).not.toContain("NEW PROMPT");
  });

  it("shows modeVersion in the session's view (null when unpinned)", async () => {
    const { sessionId } = (await pinned(1)).json as { sessionId: string };
    const view = (await call("GET", `/context/sessions/${sessionId}`, undefined, admin)).json as SessionView;
    expect(view.modeVersion).toBe(1);
    const plain = (await call("POST", "/context/sessions", { mode: "triage" }, admin)).json as { sessionId: string };
    const plainView = (await call("GET", `/context/sessions/${plain.sessionId}`, undefined, admin)).json as SessionView;
    expect(plainView.modeVersion).toBeNull();
  });

  it("cannot change its mode (agent_change_mode's session manager refuses, saying why)", async () => {
    const { sessionId } = (await pinned(1)).json as { sessionId: string };
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
    const refusal = await runInDurableObject(stub, (session: AgentSession) =>
      session.setSessionMode(sessionId, "general", "asked", "org-a", "alice").then(
        () => "changed",
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
    );
    expect(refusal).toBe(
      "This session is pinned to version 1 of the mode 'triage': its mode cannot change. Start a new session for another mode.",
    );
    const view = (await call("GET", `/context/sessions/${sessionId}`, undefined, admin)).json as SessionView;
    expect(view.mode).toBe("triage");
  });

  it("answers switch_mode with 400 naming 'mode', saying why, and keeps its mode", async () => {
    const { sessionId } = (await pinned(1)).json as { sessionId: string };
    const answer = await call(
      "POST",
      `/context/sessions/${sessionId}/workflows/switch_mode`,
      { parameters: { mode: "general" } },
      admin,
    );
    expect([answer.status, (answer.json as ErrorBody).error]).toEqual([
      400,
      {
        code: "invalid_workflow_parameters",
        type: "invalid_request_error",
        param: "mode",
        message:
          "This session is pinned to version 1 of the mode 'triage': its mode cannot change. Start a new session for another mode.",
      },
    ]);
    const view = (await call("GET", `/context/sessions/${sessionId}`, undefined, admin)).json as SessionView;
    expect(view.mode).toBe("triage");
  });

  it("is refused to a member (403 insufficient_scope)", async () => {
    const answer = await pinned(1, TEST_KEYS.chat.key);
    expect(answer.status).toBe(403);
    expect((answer.json as ErrorBody).error.code).toBe("insufficient_scope");
  });

  it("is refused for a version the mode never had (404 mode_version_not_found)", async () => {
    const answer = await pinned(7);
    expect(answer.status).toBe(404);
    expect((answer.json as ErrorBody).error).toMatchObject({ code: "mode_version_not_found", param: "modeVersion" });
  });
});

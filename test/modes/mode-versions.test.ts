// Mode versions (docs/modes.md, Versions): every change through the admin API is a version, listed newest first,
// each with its snapshot; a diff of two; a restore writes a new version equal in content to an old one; a turn records
// the version it ran with (its timeline's run step, its usage rows); another org and a member cannot read them.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentMode } from "../../src/modes/agent-mode";
import type { SessionView } from "../../src/wire/session";
import type { TurnTimeline } from "../../src/wire/timeline";
import { freshDatabase } from "../fixtures/database";
import { TEST_KEYS } from "../fixtures/keys";
import { call, type ErrorBody } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const admin = TEST_KEYS.admin.key;
const base = {
  displayName: "Triage",
  description: "Sorting tickets.",
  systemPrompt: "Prompt one.",
  tools: ["agent_hello_world"],
};
type Entry = { version: number; createdBy: string | null; current: boolean };
type Diff = { from: number; to: number; changes: { field: string; before: unknown; after: unknown }[] };

const versions = async (key = "triage", as: string = admin) =>
  call("GET", `/admin/modes/${key}/versions`, undefined, as);
const version = async (n: number | string, as: string = admin) =>
  call("GET", `/admin/modes/triage/versions/${n}`, undefined, as);

beforeAll(async () => {
  await freshDatabase();
  expect((await call("PUT", "/admin/modes/triage", base, admin)).status).toBe(201);
  expect((await call("PATCH", "/admin/modes/triage", { systemPrompt: "Prompt two." }, admin)).status).toBe(200);
  const third = await call("PUT", "/admin/modes/triage", { ...base, systemPrompt: "Prompt three." }, admin);
  expect((third.json as { mode: AgentMode }).mode.version).toBe(3);
});

describe("mode versions", () => {
  it("lists a change's versions newest first, the current one marked, each by who made it", async () => {
    const { data } = (await versions()).json as { data: Entry[] };
    expect(data.map(({ version, createdBy, current }) => ({ version, createdBy, current }))).toEqual([
      { version: 3, createdBy: "alice", current: true },
      { version: 2, createdBy: "alice", current: false },
      { version: 1, createdBy: "alice", current: false },
    ]);
  });

  it("keeps each version's snapshot (a PATCH keeps the fields it did not send)", async () => {
    const prompts = [];
    for (const n of [1, 2, 3]) prompts.push((await version(n)).json as AgentMode);
    expect(prompts.map((m) => [m.version, m.systemPrompt, m.tools])).toEqual([
      [1, "Prompt one.", ["agent_hello_world"]],
      [2, "Prompt two.", ["agent_hello_world"]],
      [3, "Prompt three.", ["agent_hello_world"]],
    ]);
  });

  it("answers a mode never changed since versions began as its version 1", async () => {
    const { data } = (await versions("general")).json as { data: Entry[] };
    expect(data.map(({ version, createdBy, current }) => ({ version, createdBy, current }))).toEqual([
      { version: 1, createdBy: null, current: true },
    ]);
  });

  it("diffs two versions field by field, leaving the version and timestamps out", async () => {
    const { json } = await call("GET", "/admin/modes/triage/versions/1/diff?to=2", undefined, admin);
    expect(json as Diff).toEqual({
      from: 1,
      to: 2,
      changes: [{ field: "systemPrompt", before: "Prompt one.", after: "Prompt two." }],
    });
  });

  it("restores an old version as a new one equal in content, in the audit log as mode.restore", async () => {
    await freshDatabase();
    await call("PUT", "/admin/modes/triage", base, admin);
    await call("PATCH", "/admin/modes/triage", { systemPrompt: "Prompt two.", memory: false }, admin);
    const restored = await call("POST", "/admin/modes/triage/versions/1/restore", undefined, admin);
    expect(restored.status).toBe(200);
    const { mode } = restored.json as { mode: AgentMode };
    expect([mode.version, mode.systemPrompt, mode.memory]).toEqual([3, "Prompt one.", true]);
    const diff = (await call("GET", "/admin/modes/triage/versions/1/diff", undefined, admin)).json as Diff;
    expect(diff).toEqual({ from: 1, to: 3, changes: [] });
    const audit = await call("GET", "/admin/audit", undefined, admin);
    const actions = (audit.json as { entries: { action: string }[] }).entries.map((e) => e.action);
    expect(actions).toContain("mode.restore");
  });

  it("records the version a turn ran with on its timeline's run step and its usage rows", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Sorted." }]);
    const { sessionId } = (await call("POST", "/context/sessions", { mode: "triage" }, admin)).json as {
      sessionId: string;
    };
    await call("POST", `/context/sessions/${sessionId}/messages`, { content: script.marker }, admin);
    const view = (await call("GET", `/context/sessions/${sessionId}`, undefined, admin)).json as SessionView;
    const turnId = view.turns[0]?.turnId ?? "";
    const path = `/context/sessions/${sessionId}/turns/${encodeURIComponent(turnId)}/timeline`;
    const timeline = (await call("GET", path, undefined, admin)).json as TurnTimeline;
    expect(timeline.steps.filter((s) => s.kind === "run").map((s) => s.modeVersion)).toEqual([3]);
    expect(await usageVersions(sessionId)).toEqual([3]);
  });

  it("answers another org 404 for a mode of this org's", async () => {
    const answer = await versions("triage", TEST_KEYS.otherOrg.key);
    expect(answer.status).toBe(404);
    expect((answer.json as ErrorBody).error.code).toBe("mode_not_found");
  });

  it("answers a member 403", async () => {
    expect((await versions("triage", TEST_KEYS.chat.key)).status).toBe(403);
  });

  it("answers 404 mode_version_not_found for a version the mode never had", async () => {
    const answer = await version(42);
    expect(answer.status).toBe(404);
    expect((answer.json as ErrorBody).error).toMatchObject({ code: "mode_version_not_found", param: "version" });
  });

  it("answers 400 naming the version for one that is not a whole number", async () => {
    const answer = await version("1.5");
    expect(answer.status).toBe(400);
    expect((answer.json as ErrorBody).error.param).toBe("version");
  });
});

/** The mode_version of the session's usage rows, once written (the object writes them in a batch after its reply). */
async function usageVersions(sessionId: string): Promise<(number | null)[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare("SELECT mode_version FROM usage_records WHERE session_id = ?")
      .bind(sessionId)
      .all<{ mode_version: number | null }>();
    if (results.length > 0 || Date.now() > deadline) return results.map((r) => r.mode_version);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

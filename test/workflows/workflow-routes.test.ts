// Workflows: listed apart from tools, grouped by category, run inside the session under the turn rule.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

type RunResponse = {
  sessionId: string;
  workflowId: string;
  mode: string;
  message: string;
  data: Record<string, unknown>;
};
const run = (id: string, workflowId: string, body: unknown, key?: string) =>
  call("POST", `/context/sessions/${id}/workflows/${workflowId}`, body, key);

describe("GET /workflows", () => {
  it("lists the workflows with their parameter schemas, and no tools", async () => {
    const { status, json } = await call("GET", "/workflows");
    expect(status).toBe(200);
    const { workflows } = json as {
      workflows: { id: string; category: string; parameters: { properties: object; required: string[] } }[];
    };
    expect(workflows.map((w) => w.id)).toEqual(["switch_mode", "branch_session", "draft_ddr"]);
    const ddr = workflows.find((w) => w.id === "draft_ddr");
    expect(ddr?.parameters.required).toEqual(["id", "title"]);
    expect(Object.keys(ddr?.parameters.properties ?? {})).toEqual(["id", "title", "owner", "purpose"]);
    expect(workflows.map((w) => w.id)).not.toContain("agent_change_mode");
  });

  it("lists the categories in display order, each with its workflows", async () => {
    const { json } = await call("GET", "/workflows/categories");
    const { categories } = json as { categories: { id: string; order: number; workflows: { id: string }[] }[] };
    expect(categories.map((c) => [c.id, c.workflows.map((w) => w.id)])).toEqual([
      ["session", ["switch_mode", "branch_session"]],
      ["documents", ["draft_ddr"]],
    ]);
  });
});

describe("running workflows", () => {
  it("switch_mode changes the mode with the reason 'selected by the user' and records it for the model", async () => {
    const id = await createSession();
    const { status, json } = await run(id, "switch_mode", { parameters: { mode: "workspace" } });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      workflowId: "switch_mode",
      mode: "workspace",
      data: { from: "general", mode: "workspace", changed: true },
    });
    const session = await getSession(id);
    expect(session.modeHistory).toMatchObject([
      { from: "general", to: "workspace", reason: "selected by the user", userId: "bob" },
    ]);

    const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
    await sendMessage(id, `what did I do? ${script.marker}`);
    const [sent] = (await script.bodies()) as { messages: { role: string; content: string }[] }[];
    expect(sent?.messages.find((m) => m.content?.startsWith("[workflow]"))?.content).toBe(
      '[workflow] I ran "Switch mode" (switch_mode) with {"mode":"workspace"}. Switched the session from the general mode to the workspace mode.',
    );
  });

  it("branch_session starts a linked session in the chosen mode", async () => {
    const id = await createSession();
    const { json } = await run(id, "branch_session", { parameters: { mode: "ddr_authoring" } });
    const branchId = String((json as RunResponse).data.branchSessionId);
    expect(await getSession(branchId)).toMatchObject({ mode: "ddr_authoring", parentSessionId: id });
    expect((await getSession(id)).mode).toBe("general");
  });

  it("draft_ddr keeps a DDR skeleton as an artifact the session lists", async () => {
    const id = await createSession("ddr_authoring");
    const { json } = await run(id, "draft_ddr", { parameters: { id: "TUL-020", title: "Workspace Search Tool" } });
    expect((json as RunResponse).data.title).toBe("TUL-020 — Workspace Search Tool");
    const [artifact] = (await getSession(id)).artifacts;
    expect(artifact).toMatchObject({ kind: "ddr", title: "TUL-020 — Workspace Search Tool" });
    for (const heading of [
      "**ID:** TUL-020",
      "**Status:** Draft",
      "**Owner:** bob",
      "## Approval Metadata",
      "## 1. Purpose",
      "## 2. Scope and Non-Goals",
      "## 3. Contract",
      "## 6. Testing Requirements",
    ]) {
      expect(artifact?.content).toContain(heading);
    }
  });

  it("takes parameters from the user's own words: a positional first word and key=value pairs", async () => {
    const id = await createSession();
    const { status, json } = await run(id, "draft_ddr", { input: 'TUL-021 title="Search tool" owner=Dana' });
    expect(status).toBe(200);
    expect((json as RunResponse).data.title).toBe("TUL-021 — Search tool");
    expect((await getSession(id)).artifacts[0]?.content).toContain("**Owner:** Dana");
  });

  it("says what is missing when the user's words lack a required parameter", async () => {
    const { status, json } = await run(await createSession(), "draft_ddr", { input: "TUL-022" });
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({ message: `Missing 'title': add title="...".`, param: "title" });
  });

  it("answers 400 naming the bad field, and changes nothing", async () => {
    const id = await createSession();
    const { status, json } = await run(id, "draft_ddr", { parameters: { id: "ddr one", title: "A title" } });
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({ param: "id", code: "invalid_workflow_parameters" });
    expect((json as ErrorBody).error.message).toBe(
      "Invalid 'id' in the parameters: must look like TUL-012 (letters, a hyphen, digits).",
    );
    expect((await getSession(id)).artifacts).toEqual([]);
  });

  it("answers 400 naming 'mode' for a mode the catalog does not have", async () => {
    const { status, json } = await run(await createSession(), "switch_mode", { parameters: { mode: "astrology" } });
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({
      param: "mode",
      message: "Unknown mode 'astrology'. Known modes: general, ddr_authoring, workspace.",
    });
  });

  it("answers 404 for an unknown workflow, and for another org's session", async () => {
    const id = await createSession();
    expect((await run(id, "launch_rockets", { parameters: {} })).status).toBe(404);
    const other = await run(id, "switch_mode", { parameters: { mode: "workspace" } }, TEST_KEYS.otherOrg.key);
    expect(other.status).toBe(404);
    expect((await getSession(id)).mode).toBe("general");
  });

  it("answers 409 session_busy while a turn runs, and changes nothing", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "slow", delayFirstByteMs: 500 }]);
    const id = await createSession();
    const turn = sendMessage(id, `think ${script.marker}`);
    await new Promise((resolve) => setTimeout(resolve, 120));
    const busy = await run(id, "switch_mode", { parameters: { mode: "workspace" } });
    expect(busy.status).toBe(409);
    expect((busy.json as ErrorBody).error.code).toBe("session_busy");
    await turn;
    expect((await getSession(id)).mode).toBe("general");
  });

  it("refuses a body with both or neither of parameters and input", async () => {
    const id = await createSession();
    expect((await run(id, "switch_mode", {})).status).toBe(400);
    expect((await run(id, "switch_mode", { parameters: { mode: "workspace" }, input: "workspace" })).status).toBe(400);
  });
});

describe("workflow parameters named like Object's own properties", () => {
  async function rawRun(id: string, text: string) {
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/workflows/switch_mode`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json" },
      body: text,
    });
    return { status: response.status, error: ((await response.json()) as ErrorBody).error };
  }

  for (const key of ["__proto__", "constructor", "prototype"]) {
    it(`rejects '${key}' in parameters like any unknown key, and changes nothing`, async () => {
      const id = await createSession();
      const { status, error } = await rawRun(id, `{"parameters":{"mode":"workspace","${key}":{"polluted":true}}}`);
      expect([status, error.code, error.param]).toEqual([400, "invalid_workflow_parameters", key]);
      expect((await getSession(id)).mode).toBe("general");
    });

    it(`rejects '${key}=…' in the user's words like any unknown key`, async () => {
      const id = await createSession();
      const { status, error } = await rawRun(id, JSON.stringify({ input: `workspace ${key}=x` }));
      expect([status, error.code, error.param]).toEqual([400, "invalid_workflow_parameters", key]);
    });
  }
});

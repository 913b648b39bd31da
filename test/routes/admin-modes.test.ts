// PUT /admin/modes/:key: admin-scoped, zod-validated adding and changing of catalog modes.
import { exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { freshDatabase } from "../fixtures/database";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";

beforeEach(freshDatabase);

const modeBody = {
  displayName: "Support Triage",
  description: "Sorting incoming support tickets.",
  systemPromptSummary: "Classify and route tickets.",
  systemPrompt: "You are Aptix in Support Triage mode. Classify each ticket by product and urgency.",
  humanRoleHints: ["support engineer"],
  exampleUtterances: ["Triage ticket 4512."],
  tools: ["agent_hello_world"],
};

function put(key: string, body: unknown, apiKey: string = TEST_KEYS.operator.key) {
  return exports.default.fetch(`http://aptix.test/admin/modes/${key}`, {
    method: "PUT",
    headers: { ...authHeaders(apiKey), "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function catalogKeys(): Promise<{ key: string; isDefault: boolean }[]> {
  const response = await exports.default.fetch("http://aptix.test/modes", { headers: authHeaders() });
  return ((await response.json()) as { modes: { key: string; isDefault: boolean }[] }).modes;
}

type ErrorBody = { error: { message: string; type: string; code: string; param: string | null } };

describe("PUT /admin/modes/:key", () => {
  it("adds a mode (201) that GET /modes then lists", async () => {
    const response = await put("support_triage", modeBody);
    expect(response.status).toBe(201);
    const { mode } = (await response.json()) as { mode: Record<string, unknown> };
    expect(mode).toMatchObject({
      key: "support_triage",
      displayName: "Support Triage",
      isDefault: false,
      tools: ["agent_hello_world"],
    });
    expect(mode.id).toMatch(/^[0-9a-f]{32}$/);
    expect((await catalogKeys()).map((m) => m.key)).toContain("support_triage");
  });

  it("changes an existing mode (200) and keeps its id", async () => {
    const before = (await (await put("support_triage", modeBody)).json()) as { mode: { id: string } };
    const response = await put("support_triage", { ...modeBody, description: "Routing tickets to teams." });
    expect(response.status).toBe(200);
    const after = (await response.json()) as { mode: { id: string; description: string } };
    expect(after.mode.id).toBe(before.mode.id);
    expect(after.mode.description).toBe("Routing tickets to teams.");
  });

  it("moves the default in one transaction, leaving exactly one default", async () => {
    expect((await put("workspace", { ...modeBody, isDefault: true })).status).toBe(200);
    const defaults = (await catalogKeys()).filter((m) => m.isDefault).map((m) => m.key);
    expect(defaults).toEqual(["workspace"]);
  });

  it("refuses to clear the default flag of the default mode", async () => {
    const response = await put("general", { ...modeBody, isDefault: false });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.param).toBe("isDefault");
    expect((await catalogKeys()).find((m) => m.isDefault)?.key).toBe("general");
  });

  it("answers 403 for a key without the admin scope and changes nothing", async () => {
    const response = await put("support_triage", modeBody, TEST_KEYS.chat.key);
    expect(response.status).toBe(403);
    expect(((await response.json()) as ErrorBody).error).toEqual({
      message: "This API key lacks the 'admin' scope.",
      type: "permission_error",
      code: "insufficient_scope",
      param: null,
    });
    expect((await catalogKeys()).map((m) => m.key)).not.toContain("support_triage");
  });

  it("answers 400 naming a missing field", async () => {
    const { displayName: _omitted, ...body } = modeBody;
    const response = await put("support_triage", body);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.param).toBe("displayName");
    expect(error.message).toMatch(/^Invalid 'displayName' in the request body: /);
  });

  it("answers 400 naming a mode's missing field, not 'enabled', for a body with only a few of a mode's fields", async () => {
    const response = await put("support_triage", { displayName: "Support Triage", tools: ["agent_hello_world"] });
    const { error } = (await response.json()) as ErrorBody;
    expect([response.status, error.param]).toEqual([400, "description"]);
  });

  it("answers 400 for a body that is not JSON", async () => {
    const response = await put("support_triage", "{nope");
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.code).toBe("invalid_json");
  });

  it("answers 400 naming an unknown tool", async () => {
    const response = await put("support_triage", { ...modeBody, tools: ["agent_hello_world", "rm_rf"] });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.param).toBe("tools.1");
    expect(error.message).toMatch(/^Invalid 'tools\.1' in the request body: unknown tool 'rm_rf'; known tools: /);
  });

  it("answers 400 for an approval rule on a tool the mode does not offer", async () => {
    const response = await put("support_triage", {
      ...modeBody,
      approvalRequiredTools: ["agent_hello_world", "workspace_nuke"],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.param).toBe("approvalRequiredTools.1");
  });

  it("answers 400 for an unknown body field and for a malformed key", async () => {
    const unknownField = await put("support_triage", { ...modeBody, colour: "red" });
    expect(unknownField.status).toBe(400);
    const badKey = await put("Bad%20Key", modeBody);
    expect(badKey.status).toBe(400);
    expect(((await badKey.json()) as ErrorBody).error.param).toBe("key");
  });
});

describe("PUT /admin/modes/:key: unknown fields", () => {
  it("answers 400 for an unknown field, naming it in param", async () => {
    const response = await put("support_triage", { ...modeBody, colour: "blue" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error).toEqual({
      message: "Unknown field 'colour' in the request body.",
      type: "invalid_request_error",
      code: "unknown_field",
      param: "colour",
    });
  });

  it("names an unknown field nested in a list by its path", async () => {
    const created = await exports.default.fetch("http://aptix.test/context/sessions", {
      method: "POST",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: "{}",
    });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/approvals`, {
      method: "POST",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "c", approved: true, extra: 1 }] }),
    });
    expect(((await response.json()) as ErrorBody).error.param).toBe("decisions.0.extra");
  });
});

describe("DELETE /admin/modes/:key", () => {
  const remove = (key: string, apiKey: string = TEST_KEYS.admin.key) =>
    exports.default.fetch(`http://aptix.test/admin/modes/${key}`, { method: "DELETE", headers: authHeaders(apiKey) });

  it("removes an org's own mode (204), which GET /modes then no longer lists", async () => {
    expect((await put("support_triage", modeBody, TEST_KEYS.admin.key)).status).toBe(201);
    expect((await remove("support_triage")).status).toBe(204);
    expect((await catalogKeys()).map((m) => m.key)).not.toContain("support_triage");
  });

  it("refuses to remove the default mode, saying to make another the default first", async () => {
    expect((await put("support_triage", { ...modeBody, isDefault: true }, TEST_KEYS.admin.key)).status).toBe(201);
    const response = await remove("support_triage");
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error).toEqual({
      message: "Mode 'support_triage' is the default mode; make another mode the default before you delete it.",
      type: "invalid_request_error",
      code: "invalid_request",
      param: "key",
    });
  });

  it("answers 404 mode_not_found for a mode that does not exist", async () => {
    const response = await remove("no_such_mode");
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("mode_not_found");
  });
});

describe("GET /admin/tools", () => {
  it("lists every registered tool, the two offered everywhere marked, for a mode editor to offer", async () => {
    const response = await exports.default.fetch("http://aptix.test/admin/tools", { headers: authHeaders() });
    expect(response.status).toBe(200);
    const { tools } = (await response.json()) as { tools: { name: string; alwaysOffered: boolean }[] };
    expect(tools.filter((t) => t.alwaysOffered).map((t) => t.name)).toEqual(["agent_change_mode", "agent_list_modes"]);
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["agent_hello_world", "workspace_read_file", "clock_current_time"]),
    );
  });
});

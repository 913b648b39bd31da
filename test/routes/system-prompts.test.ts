// GET /v1/system-prompts/:id/enhanced?mode=KEY: the enhanced prompt our context endpoints send, with its tools.
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { JSON_TOOL_CALL_INSTRUCTIONS, MERMAID_INSTRUCTIONS } from "../../src/prompts/prompt-texts";
import { settings } from "../../src/settings";
import { freshDatabase } from "../fixtures/database";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import type { ErrorBody } from "../fixtures/sessions";
import { trackedExecutionContext } from "../setup/pending-work";

beforeEach(freshDatabase);

interface EnhancedBody {
  id: string;
  mode: string;
  prompt: string;
  tools: string[];
  omittedTools: string[];
  estimatedTokens: number;
}

type Vars = Partial<Pick<Cloudflare.Env, "LLM_TOOL_FORMAT" | "PROMPT_BUDGET_TOKENS">>;

/** GET through the Worker's own entry point, or through the same app with some vars changed. */
async function getEnhanced(
  path: string,
  options: { headers?: Record<string, string>; vars?: Vars } = {},
): Promise<{ status: number; json: unknown }> {
  const url = `http://aptix.test${path}`;
  const init = { headers: options.headers ?? authHeaders(TEST_KEYS.chat.key) };
  const response = options.vars
    ? await createApp().fetch(new Request(url, init), { ...env, ...options.vars }, trackedExecutionContext())
    : await exports.default.fetch(url, init);
  return { status: response.status, json: await response.json() };
}

async function enhanced(path: string, vars?: Vars): Promise<EnhancedBody> {
  const { status, json } = await getEnhanced(path, vars ? { vars } : {});
  expect(status).toBe(200);
  return json as EnhancedBody;
}

async function storedPrompt(id: string): Promise<string> {
  const row = await env.DB.prepare("SELECT content FROM system_prompts WHERE id = ?")
    .bind(id)
    .first<{ content: string }>();
  return row?.content ?? "";
}

async function modePrompt(key: string): Promise<string> {
  const row = await env.DB.prepare("SELECT system_prompt FROM modes WHERE key = ?")
    .bind(key)
    .first<{ system_prompt: string }>();
  return row?.system_prompt ?? "";
}

describe("GET /v1/system-prompts/:id/enhanced", () => {
  it("answers exactly id, mode, prompt, tools, omittedTools and estimatedTokens", async () => {
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=workspace");
    expect(Object.keys(body).sort()).toEqual(["estimatedTokens", "id", "mode", "omittedTools", "prompt", "tools"]);
    expect(body).toMatchObject({ id: "default", mode: "workspace", omittedTools: [] });
    expect(body.estimatedTokens).toBe(Math.ceil(body.prompt.length / 4));
  });

  it("builds the prompt from the stored base prompt and the mode's system prompt", async () => {
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=ddr_authoring");
    const base = await storedPrompt("default");
    expect(
      body.prompt.startsWith(
        `${base}\n\n## Mode: DDR Authoring (ddr_authoring)\n${await modePrompt("ddr_authoring")}\n\n`,
      ),
    ).toBe(true);
  });

  it("uses another stored prompt as the base when its id is asked for", async () => {
    await env.DB.prepare(
      "INSERT INTO system_prompts (id, name, content) VALUES ('terse', 'Terse', 'Answer in one line.')",
    ).run();
    const body = await enhanced("/v1/system-prompts/terse/enhanced?mode=general");
    expect(body.id).toBe("terse");
    expect(body.prompt.startsWith("Answer in one line.\n\n## Mode: General Chat (general)\n")).toBe(true);
  });

  it("lists the mode's tools with agent_change_mode and agent_list_modes, by category", async () => {
    const workspace = await enhanced("/v1/system-prompts/default/enhanced?mode=workspace");
    expect(workspace.tools).toEqual([
      "agent_change_mode",
      "agent_list_modes",
      "workspace_read_file",
      "workspace_write_file",
    ]);
    const general = await enhanced("/v1/system-prompts/default/enhanced?mode=general");
    expect(general.tools).toEqual([
      "agent_change_mode",
      "agent_list_modes",
      "agent_hello_world",
      "memory_save",
      "memory_search",
    ]);
  });

  it("offers agent_change_mode and agent_list_modes in a mode whose list is empty", async () => {
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=ddr_authoring");
    expect(body.tools).toEqual(["agent_change_mode", "agent_list_modes"]);
  });

  it("describes exactly the tools it lists, each under its category heading", async () => {
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=workspace");
    const described = [...body.prompt.matchAll(/^#### (\S+)$/gm)].map((m) => m[1]);
    expect(described).toEqual(body.tools);
    const headings = [...body.prompt.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual(["Session", "Workspace"]);
  });

  it("follows the mode catalog: a tool an admin adds to a mode is described", async () => {
    await env.DB.prepare("UPDATE modes SET tools = '[\"agent_hello_world\"]' WHERE key = 'ddr_authoring'").run();
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=ddr_authoring");
    expect(body.tools).toEqual(["agent_change_mode", "agent_list_modes", "agent_hello_world"]);
    expect(body.prompt).toMatch(/^#### agent_hello_world$/m);
  });

  it("uses the default mode when no mode is given", async () => {
    const body = await enhanced("/v1/system-prompts/default/enhanced");
    expect(body.mode).toBe("general");
    expect(body.prompt).toContain("\n\n## Mode: General Chat (general)\n");
  });

  it("ends with the mermaid instructions", async () => {
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=general");
    expect(body.prompt.endsWith(`## Diagrams\n${MERMAID_INSTRUCTIONS}\n`)).toBe(true);
  });

  it("leaves out the JSON tool-call instructions when the model uses native function calling", async () => {
    expect(settings(env).llm.toolFormat).toBe("native");
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=general");
    expect(body.prompt).not.toContain("## Tool call format");
    expect(body.prompt).not.toContain(JSON_TOOL_CALL_INSTRUCTIONS);
  });

  it("adds the JSON tool-call instructions when LLM_TOOL_FORMAT is json", async () => {
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=general", { LLM_TOOL_FORMAT: "json" });
    expect(body.prompt).toContain(`## Tool call format\n${JSON_TOOL_CALL_INSTRUCTIONS}\n\n## Diagrams\n`);
  });

  it("answers the same bytes to the same request", async () => {
    const path = "/v1/system-prompts/default/enhanced?mode=workspace";
    const first = await exports.default.fetch(`http://aptix.test${path}`, { headers: authHeaders() });
    const second = await exports.default.fetch(`http://aptix.test${path}`, { headers: authHeaders() });
    expect(await second.text()).toBe(await first.text());
  });

  it("names the tools it left out to fit PROMPT_BUDGET_TOKENS, lowest priority first", async () => {
    const full = await enhanced("/v1/system-prompts/default/enhanced?mode=workspace");
    const trimmed = await enhanced("/v1/system-prompts/default/enhanced?mode=workspace", { PROMPT_BUDGET_TOKENS: "1" });
    expect(full.omittedTools).toEqual([]);
    expect(trimmed.omittedTools).toEqual(["workspace_write_file", "workspace_read_file"]);
    expect(trimmed.tools).toEqual(["agent_change_mode", "agent_list_modes"]);
    expect(trimmed.prompt).not.toMatch(/^#### workspace_/m);
    expect(trimmed.estimatedTokens).toBeLessThan(full.estimatedTokens);
  });

  it("fits a budget between the full and the smallest prompt without leaving out more than needed", async () => {
    const full = await enhanced("/v1/system-prompts/default/enhanced?mode=workspace");
    const budget = full.estimatedTokens - 1;
    const body = await enhanced("/v1/system-prompts/default/enhanced?mode=workspace", {
      PROMPT_BUDGET_TOKENS: String(budget),
    });
    expect(body.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(body.omittedTools).toEqual([]);
    expect(body.tools).toEqual(full.tools);
  });

  it("answers 404 naming the system prompt when it does not exist", async () => {
    const { status, json } = await getEnhanced("/v1/system-prompts/nope/enhanced?mode=general");
    expect(status).toBe(404);
    expect(json).toEqual({
      error: {
        message: "System prompt 'nope' not found.",
        type: "not_found_error",
        code: "system_prompt_not_found",
        param: null,
      },
    });
  });

  it("answers 404 naming the mode when it does not exist", async () => {
    const { status, json } = await getEnhanced("/v1/system-prompts/default/enhanced?mode=astrology");
    expect(status).toBe(404);
    expect(json).toEqual({
      error: { message: "Mode 'astrology' not found.", type: "not_found_error", code: "mode_not_found", param: null },
    });
  });

  it("answers 401 in OpenAI's error shape without an API key", async () => {
    const { status, json } = await getEnhanced("/v1/system-prompts/default/enhanced?mode=general", { headers: {} });
    expect(status).toBe(401);
    expect((json as ErrorBody).error).toEqual({
      message: "Missing API key. Send it as 'Authorization: Bearer <key>', or sign in (GET /auth/login).",
      type: "authentication_error",
      code: "missing_api_key",
      param: null,
    });
  });

  it("answers 401 for an unknown API key", async () => {
    const { status, json } = await getEnhanced("/v1/system-prompts/default/enhanced?mode=general", {
      headers: authHeaders("not-a-key"),
    });
    expect(status).toBe(401);
    expect((json as ErrorBody).error.code).toBe("invalid_api_key");
  });
});

// docs/guides/connect-a-client.md's examples, each the file the guide shows (docs/guides/examples/), run inside the
// Workers runtime against the server as `npm start` serves it (the offline demo model), with the Worker's own fetch
// where a reader's would use the network; and its shell steps (a session for the WebSocket client) as written.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import guide from "../../docs/guides/connect-a-client.md?raw";
import { main as aiSdk } from "../../docs/guides/examples/ai-sdk.ts";
import aiSdkSource from "../../docs/guides/examples/ai-sdk.ts?raw";
import { main as anthropic } from "../../docs/guides/examples/anthropic.ts";
import anthropicSource from "../../docs/guides/examples/anthropic.ts?raw";
import type { Aptix } from "../../docs/guides/examples/aptix.ts";
import { main as mcp } from "../../docs/guides/examples/mcp.ts";
import mcpSource from "../../docs/guides/examples/mcp.ts?raw";
import { main as openai } from "../../docs/guides/examples/openai.ts";
import openaiSource from "../../docs/guides/examples/openai.ts?raw";
import { main as openaiAgents } from "../../docs/guides/examples/openai-agents.ts";
import openaiAgentsSource from "../../docs/guides/examples/openai-agents.ts?raw";
import { blockShowing, curlCommands, guideBlocks, sendCurl } from "../fixtures/guide-blocks";
import { newChatKey } from "../passthrough/harness";

const HELLO = "[offline demo model] Hello, Ada! Welcome to Aptix.";

async function aptix(): Promise<Aptix> {
  const { key } = await newChatKey("org-a", ["chat", "admin", "operator"]);
  return { url: "http://localhost:8788", key, fetch: (input, init) => exports.default.fetch(input, init) };
}

describe("docs/guides/connect-a-client.md", () => {
  it("shows each example's file as it is", () => {
    const shown = (name: string) => blockShowing(guide, `docs/guides/examples/${name}.ts`);
    expect(shown("openai")).toBe(openaiSource);
    expect(shown("anthropic")).toBe(anthropicSource);
    expect(shown("ai-sdk")).toBe(aiSdkSource);
    expect(shown("openai-agents")).toBe(openaiAgentsSource);
    expect(shown("mcp")).toBe(mcpSource);
  });

  it("greets Ada through the openai client", async () => {
    expect(await openai(await aptix())).toBe(HELLO);
  });

  it("greets Ada through the Anthropic SDK", async () => {
    expect(await anthropic(await aptix())).toBe(HELLO);
  });

  it("greets Ada through the AI SDK", async () => {
    expect(await aiSdk(await aptix())).toBe(HELLO);
  });

  it("runs the Agents SDK's own tool when the aptix agent asks for it in plain words", async () => {
    expect(await openaiAgents(await aptix())).toBe(
      '[offline demo model] The tool get_weather answered: {"city":"Paris","sky":"sunny","celsius":24}',
    );
  });

  it("lists the agent's MCP tools and greets Ada in a session it starts", async () => {
    const [tools, text] = (await mcp(await aptix())).split("\n");
    expect(tools?.replace("tools: ", "").split(", ").sort()).toEqual([
      "decide_approvals",
      "list_modes",
      "send_message",
      "start_session",
      "submit_tool_results",
    ]);
    expect(text).toBe(HELLO);
  });

  it("starts the session the WebSocket client connects to", async () => {
    const { key } = await aptix();
    const commands = guideBlocks(guide)
      .filter((b) => b.lang === "sh")
      .flatMap((b) => curlCommands(b.code, { APTIX_URL: "http://localhost:8788", APTIX_KEY: key }));
    expect(commands.map((c) => [c.method, new URL(c.url).pathname])).toEqual([["POST", "/context/sessions"]]);
    const [start] = commands;
    if (!start) throw new Error("no curl command");
    const response = await sendCurl(start);
    expect(response.status).toBe(201);
    expect(((await response.json()) as { sessionId: string }).sessionId).toMatch(/^[0-9a-f]{64}$/);
  });
});

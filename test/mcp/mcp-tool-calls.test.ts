// MCP tools through the agent loop: the scripted model calls the reference server's tools (server-everything,
// started by the test setup) in a mode that offers them, and the turn carries their results back.
import { describe, expect, it } from "vitest";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode, registerServer, toolOf } from "./fixtures";

/** One turn in which the model calls `tool` with `args` and then answers; returns the turn and what the model saw. */
async function callOnce(server: string, tool: string, args: unknown, mode?: string) {
  const name = toolOf(server, tool);
  const script = await scriptUpstream([
    { type: "completion", toolCalls: [{ name, arguments: JSON.stringify(args) }] },
    { type: "completion", content: "done" },
  ]);
  const id = await createSession(mode ?? (await mcpMode([`mcp:${server}`])));
  const response = await sendMessage(id, `call ${tool} ${script.marker}`);
  const bodies = await script.bodies();
  return { response, call: response.toolCalls[0], bodies };
}

function resultOf(resultJson: string | null | undefined): {
  text: string;
  structuredContent?: Record<string, unknown>;
  attachments?: string[];
} {
  return JSON.parse(resultJson ?? "null");
}

describe("MCP tools in the loop", () => {
  it("offers a server's tools to the model under derived names, with the server's input schema", async () => {
    const server = await registerServer();
    const { bodies } = await callOnce(server, "echo", { message: "hi" });
    const tools = (bodies[0]?.tools ?? []) as { function: { name: string; parameters: Record<string, unknown> } }[];
    const echo = tools.find((t) => t.function.name === toolOf(server, "echo"));
    expect(echo?.function.parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
  });

  it("runs echo and gives its text to the model", async () => {
    const server = await registerServer();
    const { response, call, bodies } = await callOnce(server, "echo", { message: "hello there" });
    expect(response.status).toBe("completed");
    expect(call?.errorMessage).toBeNull();
    expect(resultOf(call?.resultJson).text).toBe("Echo: hello there");
    const messages = (bodies[1]?.messages ?? []) as { role: string; content: string }[];
    const toolMessage = messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("Echo: hello there");
  });

  it("runs get-sum with numeric arguments", async () => {
    const server = await registerServer();
    const { call } = await callOnce(server, "get-sum", { a: 2, b: 40 });
    expect(resultOf(call?.resultJson).text).toBe("The sum of 2 and 40 is 42.");
  });

  it("gives get-structured-content's structured content as JSON", async () => {
    const server = await registerServer();
    const { call } = await callOnce(server, "get-structured-content", { location: "Chicago" });
    expect(resultOf(call?.resultJson).structuredContent).toEqual({
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
  });

  it("gives get-tiny-image's image as a note with its type and size, never its base64", async () => {
    const server = await registerServer();
    const { call, bodies } = await callOnce(server, "get-tiny-image", {});
    const result = resultOf(call?.resultJson);
    expect(result.attachments).toEqual([
      expect.stringMatching(/^image \(image\/png, \d+ bytes; not shown to the model\)$/),
    ]);
    expect(call?.resultJson).not.toMatch(/iVBORw0KGgo/);
    expect(JSON.stringify(bodies[1])).not.toMatch(/iVBORw0KGgo/);
  });

  it("gives an embedded resource as a note with its URI", async () => {
    const server = await registerServer();
    const { call } = await callOnce(server, "get-resource-reference", { resourceType: "Text", resourceId: 1 });
    expect(resultOf(call?.resultJson).attachments).toEqual([
      expect.stringMatching(/^resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain, \d+ characters\)$/),
    ]);
  });

  it("turns a result with isError into a failed call that names the server, the tool and what it said", async () => {
    const server = await registerServer();
    const { response, call } = await callOnce(server, "get-resource-reference", { resourceId: 0 });
    expect(response.status).toBe("completed");
    expect(call?.wasExecuted).toBe(false);
    expect(call?.errorMessage).toMatch(
      new RegExp(`^MCP tool '${server}/get-resource-reference' reported an error: .*Invalid resourceId: 0`),
    );
  });

  it("refuses arguments the tool's schema refuses before calling the server", async () => {
    const server = await registerServer();
    const { call } = await callOnce(server, "get-sum", { a: "two", b: 3 });
    expect(call?.errorMessage).toBe(
      `MCP tool '${server}/get-sum' got arguments its schema refuses: 'a': Instance type "string" is invalid. Expected "number".`,
    );
  });

  it("bounds the result the model sees by the tool-result budget, like any tool's", async () => {
    const server = await registerServer();
    const { bodies } = await callOnce(server, "echo", { message: "x".repeat(20_000) });
    const messages = (bodies[1]?.messages ?? []) as { role: string; content: string }[];
    const toolMessage = messages.find((m) => m.role === "tool")?.content ?? "";
    expect(toolMessage.length).toBeLessThan(16_200);
    expect(toolMessage).toMatch(/\n\[truncated: the result was \d+ characters; /);
  });

  it("marks each call with its server and tool", async () => {
    const server = await registerServer();
    const { call } = await callOnce(server, "echo", { message: "x" });
    expect(call?.mcp).toEqual({ server, tool: "echo" });
  });

  it("offers only the tools a mode names with mcp:<server>/<tool>", async () => {
    const server = await registerServer();
    const mode = await mcpMode([`mcp:${server}/get-sum`]);
    const { bodies } = await callOnce(server, "get-sum", { a: 1, b: 1 }, mode);
    const names = ((bodies[0]?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names.filter((n) => n.startsWith(`${server}__`))).toEqual([toolOf(server, "get-sum")]);
  });

  it("offers only the server's allow-listed tools", async () => {
    const server = await registerServer({ tools: ["echo", "get-sum"] });
    const { bodies } = await callOnce(server, "echo", { message: "x" });
    const names = ((bodies[0]?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names.filter((n) => n.startsWith(`${server}__`)).sort()).toEqual([
      toolOf(server, "echo"),
      toolOf(server, "get-sum"),
    ]);
  });
});

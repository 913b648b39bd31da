// GET /context/sessions/:id/export: the whole session, tool calls and results included, as `aptix.session.v1` JSON
// a system can import or as Markdown a person can read, saved as a file (Content-Disposition).
import { exports } from "cloudflare:workers";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { SESSION_EXPORT_FORMAT, SessionExport } from "../../src/wire/session";
import { TEST_KEYS } from "../fixtures/keys";
import { approve, call, createSession, type ErrorBody, sendMessage, sendToolResults } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

function exported(id: string, query = "", key: string = TEST_KEYS.chat.key): Promise<Response> {
  return exports.default.fetch(`http://aptix.test/context/sessions/${id}/export${query}`, {
    headers: { authorization: `Bearer ${key}` },
  });
}

/** The export's Markdown as a renderer that passes raw HTML through reads it: the tokens of each line of inline text. */
function inlineTokens(markdown: string) {
  return new MarkdownIt({ html: true })
    .parse(markdown, {})
    .filter((token) => token.type === "inline")
    .map((token) => token.children ?? []);
}

/** A session whose turn had a file written (approved, then the client's result), then answered; its marker is in the first message. */
async function sessionWithToolCall(): Promise<{ id: string; marker: string }> {
  const write = { name: "workspace_write_file", arguments: JSON.stringify({ path: "notes.txt", content: "```hi```" }) };
  const script = await scriptUpstream([
    { type: "completion", content: "I will write it.", toolCalls: [write] },
    { type: "completion", content: "Wrote notes.txt." },
  ]);
  const id = await createSession("workspace");
  const paused = await sendMessage(id, `write notes ${script.marker}`);
  const callId = paused.toolCalls[0]?.id ?? "";
  const approved = await approve(id, [{ toolCallId: callId, approved: true }]);
  expect(approved.status).toBe(200);
  // The write is the client's to do: its result comes back, and the turn ends.
  const done = await sendToolResults(id, [{ toolCallId: callId, resultJson: '{"path":"notes.txt","bytesWritten":8}' }]);
  expect(done.status).toBe(200);
  return { id, marker: script.marker };
}

describe("GET /context/sessions/:id/export", () => {
  it("exports JSON in the aptix.session.v1 shape: messages, tool calls with results, turns", async () => {
    const { id, marker } = await sessionWithToolCall();
    const response = await exported(id, "?format=json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="aptix-session-${id.slice(0, 12)}.json"`,
    );
    const doc = SessionExport.parse(await response.json());
    expect(doc.format).toBe(SESSION_EXPORT_FORMAT);
    expect(doc.session).toMatchObject({ sessionId: id, mode: "workspace", status: "idle", user: "bob" });
    expect(doc.messages[0]).toMatchObject({ role: "user", content: `write notes ${marker}` });
    expect(doc.messages.at(-1)).toMatchObject({ role: "assistant", content: "Wrote notes.txt." });
    expect(doc.toolCalls.map((c) => [c.name, c.approval, c.state, c.wasExecuted])).toEqual([
      ["workspace_write_file", "approved", "settled", true],
    ]);
    expect(doc.toolCalls[0]?.resultJson).not.toBeNull();
    expect(doc.turns.map((t) => t.status)).toEqual(["completed"]);
  });

  it("answers JSON without a format", async () => {
    const id = await createSession();
    const response = await exported(id);
    expect(SessionExport.parse(await response.json()).session.sessionId).toBe(id);
  });

  it("exports Markdown a person reads: the title, who said what, each tool call with its arguments and result", async () => {
    const { id, marker } = await sessionWithToolCall();
    await call("PATCH", `/context/sessions/${id}`, { title: "Notes for the team" });
    const response = await exported(id, "?format=markdown");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="aptix-session-${id.slice(0, 12)}.md"`,
    );
    const lines = (await response.text()).split("\n");
    expect(lines[0]).toBe("# Notes for the team");
    const headings = lines.filter((l) => l.startsWith("## ")).map((l) => l.replace(/ \(.*\)$/, ""));
    expect(headings).toEqual(["## User", "## Assistant", "## Assistant"]);
    expect(lines).toContain(`write notes ${marker}`);
    const callLine = lines.findIndex((l) => l.startsWith("**Tool call** `workspace_write_file`"));
    expect(lines[callLine]).toMatch(/\(`[^`]+`; approved\)$/);
    // The arguments hold a run of three backticks: the fence around them is longer, so it holds.
    expect(lines.slice(callLine + 2, callLine + 7)).toEqual([
      "````json",
      "{",
      '  "path": "notes.txt",',
      '  "content": "```hi```"',
      "}",
    ]);
    expect(lines).toContain("Result:");
    expect(lines).toContain("Wrote notes.txt.");
  });

  it("writes the title in the Markdown heading as literal text, not as Markdown or HTML", async () => {
    const id = await createSession();
    const title = "# x [a](javascript:alert(1)) <script>alert(1)</script> *b* &amp; `c` ## ";
    expect((await call("PATCH", `/context/sessions/${id}`, { title })).status).toBe(200);
    const markdown = await (await exported(id, "?format=markdown")).text();
    const [heading] = inlineTokens(markdown);
    expect(heading?.map((token) => token.type)).toEqual(["text"]);
    expect(heading?.[0]?.content).toBe(title.trim());
  });

  it("names an attached file as code, whatever backticks its name holds", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Read it." }]);
    const id = await createSession();
    const name = "a`b``c <i>.md";
    const file = { name, mediaType: "text/plain", text: "alpha" };
    const said = await call("POST", `/context/sessions/${id}/messages`, {
      content: `read ${script.marker}`,
      attachments: [file],
    });
    expect(said.status).toBe(200);
    const markdown = await (await exported(id, "?format=markdown")).text();
    const fileLine = inlineTokens(markdown).find((tokens) => tokens.some((t) => t.content === "Attached file"));
    expect(fileLine?.filter((t) => t.type === "code_inline").map((t) => t.content)).toEqual([name]);
  });

  it("refuses a format it does not make with 400 naming format", async () => {
    const id = await createSession();
    const response = await exported(id, "?format=pdf");
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error).toMatchObject({ code: "invalid_request", param: "format" });
  });

  it("answers another org 404, as for no session", async () => {
    const id = await createSession();
    const response = await exported(id, "", TEST_KEYS.otherOrg.key);
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("session_not_found");
  });
});

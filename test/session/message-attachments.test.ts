// A message's attachments through the real session object to the scripted upstreams: a text file reaches the model
// as a named, fenced block under the message and the view shows it; an image goes as an image_url part (an image
// block on an anthropic route) to a mode whose route reads images, and is refused on one whose route does not;
// a text-only fallback gets a note in its place; bodies that break the limits are 400s naming the field.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionListEntry } from "../../src/wire/session";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, getSession } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, putRoute, toUpstreamA, toUpstreamB } from "../routing/fixtures";

/** A 1x1 PNG, base64. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const png = { name: "dot.png", mediaType: "image/png", data: PNG };

type UserPart = { type: string; text?: string; image_url?: { url: string } };
type Sent = { messages: { role: string; content: string | UserPart[] }[] };

const post = (sessionId: string, body: unknown) => call("POST", `/context/sessions/${sessionId}/messages`, body);

/** The last user message a request body carried. */
function lastUser(body: Record<string, unknown>) {
  return (body as Sent).messages.findLast((m) => m.role === "user")?.content;
}

const imageModes = async () => modeOnRoute(await toUpstreamA({ inputModalities: ["text", "image"] }));

describe("message attachments", () => {
  it("sends a text file to the model as a named, fenced block under the message", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Read it." }]);
    const sessionId = await createSession();
    const file = { name: "notes.md", mediaType: "text/markdown", text: "# Notes\n```js\nlet x = 1;\n```" };
    const { status } = await post(sessionId, { content: `Summarise ${script.marker}`, attachments: [file] });
    expect(status).toBe(200);
    const [body] = await script.bodies();
    expect(lastUser(body ?? {})).toBe(
      `Summarise ${script.marker}\n\nAttached file \`notes.md\` (text/markdown):\n\`\`\`\`\n${file.text}\n\`\`\`\``,
    );
  });

  it("keeps a text file with its message: the view shows its name, type, size and text", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession();
    const file = { name: "a.json", mediaType: "application/json", text: '{"a":1}' };
    await post(sessionId, { content: `look ${script.marker}`, attachments: [file] });
    const view = await getSession(sessionId);
    expect(view.conversation[0]?.attachments).toEqual([{ ...file, bytes: 7 }]);
  });

  it("takes a message of files alone (no text), but not an empty one", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession();
    const file = { name: "x.txt", mediaType: "text/plain", text: `hello ${script.marker}` };
    expect((await post(sessionId, { content: "", attachments: [file] })).status).toBe(200);
    const refused = await post(sessionId, { content: "  " });
    expect(refused.status).toBe(400);
    expect((refused.json as ErrorBody).error.param).toBe("content");
  });

  it("refuses an image on a mode whose route does not read images, naming it and storing nothing", async () => {
    const sessionId = await createSession();
    const file = { name: "a.txt", mediaType: "text/plain", text: "a" };
    const refused = await post(sessionId, { content: "what is this?", attachments: [file, png] });
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({
      error: {
        message: "The mode's model does not accept images.",
        type: "invalid_request_error",
        code: "attachment_not_accepted",
        param: "attachments.1",
      },
    });
    expect((await getSession(sessionId)).conversation).toEqual([]);
  });

  it("sends an image to a mode whose route reads images as an image_url part with a data URL", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "A dot." }]);
    const sessionId = await createSession(await imageModes());
    const { status } = await post(sessionId, { content: `What is this? ${script.marker}`, attachments: [png] });
    expect(status).toBe(200);
    const [body] = await script.bodies();
    expect(lastUser(body ?? {})).toEqual([
      { type: "text", text: `What is this? ${script.marker}` },
      { type: "text", text: "Attached image `dot.png` (image/png):" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
  });

  it("shows an image in the view without its data", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession(await imageModes());
    await post(sessionId, { content: `see ${script.marker}`, attachments: [png] });
    const view = await getSession(sessionId);
    expect(view.conversation[0]?.attachments).toEqual([{ name: "dot.png", mediaType: "image/png", bytes: 70 }]);
  });

  it("sends an image to an anthropic route that reads images as a base64 image block", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "A dot." }] }]);
    const route = await putRoute({
      provider: "anthropic",
      model: "claude-test",
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
      inputModalities: ["text", "image"],
    });
    const sessionId = await createSession(await modeOnRoute(route));
    expect((await post(sessionId, { content: `What? ${script.marker}`, attachments: [png] })).status).toBe(200);
    const [body] = await script.bodies();
    const user = (body as { messages: { role: string; content: unknown }[] }).messages.findLast(
      (m) => m.role === "user",
    );
    // The image may carry the prompt cache's breakpoint (the request's last block): docs/anthropic.md.
    expect(user?.content).toContainEqual(
      expect.objectContaining({ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }),
    );
  });

  it("gives a text-only fallback route a note in place of the image", async () => {
    const a = await scriptUpstream([{ type: "error", status: 503, body: { error: { message: "down" } } }]);
    const b = await scriptUpstream([{ type: "completion", content: "ok" }], env.TEST_UPSTREAM_B_URL);
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ inputModalities: ["text", "image"], fallbacks: [fallback] });
    const sessionId = await createSession(await modeOnRoute(route));
    const content = `What? ${a.marker} ${b.marker}`;
    expect((await post(sessionId, { content, attachments: [png] })).status).toBe(200);
    const [body] = await b.bodies();
    expect(lastUser(body ?? {})).toBe(
      `${content}\nAttached image \`dot.png\` (image/png):\n(The image is not shown: this model does not read images.)`,
    );
  });

  it.each([
    ["a binary type", { name: "a.bin", mediaType: "application/octet-stream", text: "x" }, "attachments.0.mediaType"],
    ["a file with NUL characters", { name: "a.txt", mediaType: "text/plain", text: "a\u0000b" }, "attachments.0.text"],
    [
      "a text file over 100,000 characters",
      { name: "big.txt", mediaType: "text/plain", text: "x".repeat(100_001) },
      "attachments.0.text",
    ],
    ["an image of another type", { name: "a.bmp", mediaType: "image/bmp", data: "Qk0=" }, "attachments.0.mediaType"],
    [
      "an image over 500 KB",
      { name: "big.png", mediaType: "image/png", data: "A".repeat(668_000) },
      "attachments.0.data",
    ],
    ["a path for a name", { name: "../etc/passwd", mediaType: "text/plain", text: "x" }, "attachments.0.name"],
    ["both text and data", { name: "a.png", mediaType: "image/png", text: "x", data: PNG }, "attachments.0"],
  ])("refuses %s with a 400 naming the field", async (_what, file, param) => {
    const sessionId = await createSession();
    const refused = await post(sessionId, { content: "see", attachments: [file] });
    expect(refused.status).toBe(400);
    expect((refused.json as ErrorBody).error).toMatchObject({ code: "invalid_request", param });
  });

  it("refuses more than five files", async () => {
    const file = { name: "a.txt", mediaType: "text/plain", text: "a" };
    const refused = await post(await createSession(), { content: "see", attachments: Array(6).fill(file) });
    expect(refused.status).toBe(400);
    expect((refused.json as ErrorBody).error.param).toBe("attachments");
  });

  it("says what is wrong with a file in the request body's words", async () => {
    const file = { name: "big.txt", mediaType: "text/plain", text: "x".repeat(100_001) };
    const refused = await post(await createSession(), { content: "see", attachments: [file] });
    expect((refused.json as ErrorBody).error.message).toBe(
      "Invalid 'attachments.0.text' in the request body: must be at most 100000 characters (about 100 KB).",
    );
  });

  it("takes a text file with a user_message over the socket, and the model reads it", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const socket = await openSocket(await createSession());
    const file = { name: "a.txt", mediaType: "text/plain", text: "alpha" };
    socket.send({ type: "user_message", content: `read ${script.marker}`, clientMessageId: "m1", attachments: [file] });
    await socket.waitForType("turn_completed");
    socket.close();
    const [body] = await script.bodies();
    expect(lastUser(body ?? {})).toBe(
      `read ${script.marker}\n\nAttached file \`a.txt\` (text/plain):\n\`\`\`\nalpha\n\`\`\``,
    );
  });

  it("answers an image on a text-only mode over the socket with an error frame", async () => {
    const socket = await openSocket(await createSession());
    socket.send({ type: "user_message", content: "what?", clientMessageId: "m1", attachments: [png] });
    const error = await socket.waitForType("error");
    socket.close();
    expect(error).toMatchObject({
      code: "attachment_not_accepted",
      message: "The mode's model does not accept images.",
    });
  });

  it("titles a session whose first message is files alone by their names", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession();
    const files = ["notes.md", "app.ts"].map((name) => ({ name, mediaType: "text/plain", text: script.marker }));
    expect((await post(sessionId, { content: "", attachments: files })).status).toBe(200);
    // The list is written just after the session changes (off the reply path): asked again until it shows.
    const deadline = Date.now() + 5_000;
    let title: string | null | undefined = null;
    while (title === null && Date.now() < deadline) {
      const { json } = await call("GET", "/context/sessions?limit=100");
      title = (json as { sessions: SessionListEntry[] }).sessions.find((s) => s.sessionId === sessionId)?.title ?? null;
      if (title === null) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(title).toBe("notes.md, app.ts");
  });

  it("refuses an image on a text-only mode before a stream opens (Accept: text/event-stream), as a 400", async () => {
    const sessionId = await createSession();
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: "what?", attachments: [png] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error).toMatchObject({
      code: "attachment_not_accepted",
      param: "attachments.0",
    });
  });
});

// Reconnecting: resume replays what a socket missed, with no gap and no duplicate, even after eviction.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/session/event-log";
import { MAX_CLIENT_FRAME_BYTES, PLATFORM_MAX_MESSAGE_BYTES } from "../../src/session/protocol";
import { createSession, sendMessage, sendToolResults } from "../fixtures/sessions";
import { type Frame, openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";

const seqs = (frames: Frame[]) => frames.filter((f) => "turnId" in f).map((f) => f.seq);

describe("resume", () => {
  it("replays the frames a dropped socket missed mid-turn, then continues live, with no gap or duplicate", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "one two three four five six seven eight", chunkSize: 4, chunkDelayMs: 60 },
    ]);
    const id = await createSession();
    const first = await openSocket(id);
    first.send({ type: "user_message", content: `count ${script.marker}`, clientMessageId: "m1" });
    await first.waitFor((f) => f.type === "assistant_delta");
    first.close();
    const lastSeen = Math.max(...seqs(first.frames));

    const second = await openSocket(id);
    second.send({ type: "resume", afterSeq: lastSeen });
    const done = await second.waitForType("turn_completed");
    const all = [...seqs(first.frames), ...seqs(second.frames)];
    expect(all).toEqual(all.map((_, i) => i + 1));
    const text = [...first.frames, ...second.frames].filter((f) => f.type === "assistant_delta").map((f) => f.text);
    expect(text.join("")).toBe("one two three four five six seven eight");
    expect(done.response).toMatchObject({ status: "completed" });
    second.close();
  });

  it("resumes at connect with ?afterSeq, atomically", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Answer." }]);
    const id = await createSession();
    const first = await openSocket(id);
    first.send({ type: "user_message", content: `hi ${script.marker}`, clientMessageId: "m1" });
    await first.waitForType("turn_completed");
    first.close();
    const second = await openSocket(id, 1);
    await second.waitForType("turn_completed");
    expect(seqs(second.frames)).toEqual(seqs(first.frames).slice(1));
    second.close();
  });

  it("replays from storage after the object was evicted", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Before eviction." }]);
    const id = await createSession();
    const first = await openSocket(id);
    first.send({ type: "user_message", content: `hi ${script.marker}`, clientMessageId: "m1" });
    await first.waitForType("turn_completed");
    first.close();
    await evictDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id)));

    const second = await openSocket(id);
    second.send({ type: "resume", afterSeq: 0 });
    await second.waitForType("turn_completed");
    expect(second.logged()).toEqual(first.logged());
    second.close();
  });

  it("says framesMissing in session_state when the asked-for frames were pruned", async () => {
    const id = await createSession();
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    await runInDurableObject(stub, (_instance, state) => {
      const log = new EventLog(state.storage.sql, 2);
      for (let i = 0; i < 5; i++) log.append({ type: "assistant_delta", turnId: "old", text: `${i}` });
      log.prune(null);
    });
    const socket = await openSocket(id);
    socket.send({ type: "resume", afterSeq: 1 });
    const state = await socket.waitFor((f) => f.type === "session_state" && f.framesMissing === true, 1);
    expect(state).toMatchObject({ lastSeq: 5, framesMissing: true });
    socket.close();
  });
});

describe("bad frames", () => {
  it("answers malformed, unknown, invalid and oversized frames with an error naming the problem, and stays open", async () => {
    const id = await createSession();
    const socket = await openSocket(id);
    const cases: [unknown, string][] = [
      ["{not json", "malformed_frame"],
      [{ type: "launch_rockets" }, "unknown_frame_type"],
      [{ type: "user_message", clientMessageId: "m1" }, "invalid_frame"],
      [{ type: "user_message", content: "x".repeat(1_000_100), clientMessageId: "m1" }, "frame_too_large"],
    ];
    for (const [frame, code] of cases) {
      const from = socket.frames.length;
      socket.send(frame);
      expect(await socket.waitForType("error", from)).toMatchObject({ code });
    }
    expect(socket.frames.find((f) => f.code === "invalid_frame")?.message).toBe(
      "Invalid 'content' in the user_message frame: Invalid input: expected string, received undefined.",
    );
    const from = socket.frames.length;
    socket.send({ type: "ping" });
    expect(await socket.waitForType("pong", from)).toMatchObject({ type: "pong" });
    socket.close();
  });
});

describe("frames near the platform's 1 MiB limit", () => {
  it("keeps its frame limit below the 1 MiB at which Workers close a socket", () => {
    expect(MAX_CLIENT_FRAME_BYTES).toBeLessThan(PLATFORM_MAX_MESSAGE_BYTES);
  });

  it("answers a frame just over its limit, still under 1 MiB, with frame_too_large pointing to POST tool-results", async () => {
    const socket = await openSocket(await createSession());
    const filler = "x".repeat(MAX_CLIENT_FRAME_BYTES);
    const frame = JSON.stringify({ type: "tool_results", results: [{ toolCallId: "c1", resultJson: filler }] });
    expect(frame.length).toBeLessThan(PLATFORM_MAX_MESSAGE_BYTES);
    socket.send(frame);
    const error = await socket.waitForType("error");
    expect(error.code).toBe("frame_too_large");
    expect(error.message).toContain("POST /context/sessions/:sessionId/tool-results");
    socket.close();
  });

  it("takes a tool result of 2 MB over POST tool-results, past the general 1 MiB body limit", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "workspace_read_file", arguments: '{"path":"big.txt"}' }] },
      { type: "completion", content: "A big file." },
    ]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `read big.txt ${script.marker}`);
    const content = "y".repeat(2_000_000);
    const done = await sendToolResults(id, [
      { toolCallId: paused.toolCalls[0]?.id ?? "", resultJson: JSON.stringify({ path: "big.txt", content }) },
    ]);
    expect([done.status, (done.json as { status: string }).status]).toEqual([200, "completed"]);
  });
});

// A page that opens mid-turn gets the whole answer streamed so far (session_state.streamedText), then the rest.
import { describe, expect, it } from "vitest";
import { createSession } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";

const ANSWER = "The first part of the answer, then the second part, and the end.";

describe("a socket that opens while the answer streams", () => {
  it("gets the text streamed so far in session_state, and the deltas after its lastSeq complete the answer", async () => {
    const script = await scriptUpstream([{ type: "completion", content: ANSWER, chunkSize: 4, chunkDelayMs: 60 }]);
    const id = await createSession();
    const first = await openSocket(id);
    first.send({ type: "user_message", content: `explain ${script.marker}`, clientMessageId: "m1" });
    await first.waitFor(
      (f) => f.type === "assistant_delta" && first.frames.filter((g) => g.type === "assistant_delta").length >= 3,
    );

    const late = await openSocket(id);
    const state = await late.waitForType("session_state");
    await late.waitForType("turn_completed");
    const after = late.frames
      .filter((f) => f.type === "assistant_delta" && f.seq > Number(state.lastSeq))
      .map((f) => String(f.text))
      .join("");

    expect(state.status).toBe("running");
    expect(String(state.streamedText).length).toBeGreaterThanOrEqual(12);
    expect(`${state.streamedText}${after}`).toBe(ANSWER);
    first.close();
    late.close();
  });

  it("sends no streamed text when no turn runs", async () => {
    const id = await createSession();
    const socket = await openSocket(id);
    const state = await socket.waitForType("session_state");
    expect(state.status).toBe("idle");
    expect("streamedText" in state).toBe(false);
    socket.close();
  });
});

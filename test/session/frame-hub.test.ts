// Where frames go: every frame is logged, in order, with the seq its readers were shown. A text delta reaches
// the turn's streams before its row is written (a write would hold it at the output gate); it is logged with the
// deltas of the next DELTA_LOG_MS (one storage commit for them all), or before the next frame, and only then sent to
// the sockets, which resume by seq.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/session/event-log";
import { DELTA_LOG_MS, FrameHub } from "../../src/session/frame-hub";
import type { LoggedFrame } from "../../src/wire/frames";

const TURN = "turn-1";
const delta = (text: string): LoggedFrame => ({ type: "assistant_delta", turnId: TURN, text });

/** The stream's events so far: each event's type and parsed data. */
async function readEvents(readable: ReadableStream<Uint8Array>, count: number): Promise<Record<string, unknown>[]> {
  const reader = readable.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (text.split("\n\n").length - 1 < count) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  reader.releaseLock();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((event) =>
      JSON.parse(
        event
          .split("\n")
          .find((l) => l.startsWith("data: "))
          ?.slice(6) ?? "null",
      ),
    );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nextTask = () => sleep(0);
/** Past the moment the deltas wait for company. */
const pastDeltaWindow = () => sleep(DELTA_LOG_MS + 20);

async function inHub<R>(
  body: (hub: FrameHub, log: EventLog) => Promise<R>,
  deltaLogMs: number = DELTA_LOG_MS,
): Promise<R> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  return runInDurableObject(stub, (_instance, state) => {
    const log = new EventLog(state.storage.sql);
    return body(new FrameHub(state, log, deltaLogMs), log);
  });
}

describe("the frame hub", () => {
  it("sends a text delta to the turn's streams before writing it to the log", async () => {
    const { streamed, loggedAtOnce, loggedLater } = await inHub(async (hub, log) => {
      const stream = hub.openEventStream();
      hub.emit(delta("Hel"));
      const loggedAtOnce = log.since(0).frames.length;
      const streamed = await readEvents(stream.readable, 1);
      await pastDeltaWindow();
      return { streamed, loggedAtOnce, loggedLater: log.since(0).frames };
    });
    expect(loggedAtOnce).toBe(0);
    expect(streamed).toEqual([{ type: "assistant_delta", turnId: TURN, text: "Hel", seq: 1 }]);
    expect(loggedLater).toEqual([{ type: "assistant_delta", turnId: TURN, text: "Hel", seq: 1 }]);
  });

  it("logs the deltas before the next frame, in order, with the seqs the streams were shown", async () => {
    const { streamed, logged } = await inHub(async (hub, log) => {
      hub.emit({ type: "turn_started", turnId: TURN, clientMessageId: null });
      const stream = hub.openEventStream();
      hub.emit(delta("Hel"));
      hub.emit(delta("lo"));
      hub.emit({ type: "tool_call_started", turnId: TURN, toolCall: toolCall() });
      const streamed = await readEvents(stream.readable, 3);
      return { streamed, logged: log.since(0).frames };
    });
    expect(streamed.map((f) => [f.type, f.seq])).toEqual([
      ["assistant_delta", 2],
      ["assistant_delta", 3],
      ["tool_call_started", 4],
    ]);
    expect(logged.map((f) => [f.type, f.seq])).toEqual([
      ["turn_started", 1],
      ["assistant_delta", 2],
      ["assistant_delta", 3],
      ["tool_call_started", 4],
    ]);
  });

  it("keeps the streamed text of a turn whole once its deltas are logged", async () => {
    const text = await inHub(async (hub, log) => {
      hub.emit(delta("Hel"));
      hub.emit(delta("lo"));
      await pastDeltaWindow();
      return log.streamedText(TURN);
    });
    expect(text).toBe("Hello");
  });

  it("logs the deltas of a moment together: a delta a task after another waits for the same write", async () => {
    // A window far longer than a task, so that a slow machine cannot end it between the two deltas.
    const { afterTask, afterFlush } = await inHub(async (hub, log) => {
      hub.emit(delta("Hel"));
      await nextTask();
      hub.emit(delta("lo"));
      await nextTask();
      const afterTask = log.since(0).frames.length;
      hub.flush();
      return { afterTask, afterFlush: log.since(0).frames.map((f) => [f.seq, f.type === "assistant_delta" && f.text]) };
    }, 60_000);
    expect(afterTask).toBe(0);
    expect(afterFlush).toEqual([
      [1, "Hel"],
      [2, "lo"],
    ]);
  });

  it("logs the waiting deltas at once when flushed, so a stopped turn's text read from the log is whole", async () => {
    const text = await inHub(async (hub, log) => {
      hub.emit(delta("Hel"));
      hub.emit(delta("lo"));
      hub.flush();
      return log.streamedText(TURN);
    }, 60_000);
    expect(text).toBe("Hello");
  });
});

function toolCall() {
  return {
    id: "call_1",
    name: "agent_list_modes",
    argumentsJson: "{}",
    isServerTool: true,
    wasExecuted: false,
    requiresClientExecution: false,
    requiresApproval: false,
    approval: null,
    resultJson: null,
    errorMessage: null,
  };
}

// A message sent over REST with `Accept: text/event-stream`: the turn it starts, answered as the stream of frames
// it logs. The admission's refusals (busy, an image the mode's model cannot read, the key past its model call
// limit, the org's budget) come before the stream opens, as ordinary errors; the stream opens once the message is
// stored.
import type { Outcome } from "../refusal";
import type { MessageAttachment } from "../wire/attachments";
import type { Caller } from "./caller";
import type { FrameHub } from "./frame-hub";
import { guardrailStop } from "./guardrail-stop";
import { beforeDrive } from "./turn-admission";
import { startedOrEnded, type TurnDriver } from "./turn-driver";

export interface MessageStreamDeps {
  driver: TurnDriver;
  frames: FrameHub;
  waitUntil: (work: Promise<unknown>) => void;
}

/** How a stream answers a turn refused after its admission, before its message was stored (a guardrail's block). */
export interface MessageStreamOptions {
  /**
   * As the refusal, before any stream (A2A, whose client reads a refusal from the call's answer); otherwise as an
   * error frame in the stream (the session's own SSE, as its socket tells it).
   */
  refusalFirst?: boolean;
}

export async function streamMessage(
  deps: MessageStreamDeps,
  caller: Caller,
  content: string,
  attachments: readonly MessageAttachment[] = [],
  options: MessageStreamOptions = {},
): Promise<Outcome<ReadableStream<Uint8Array>>> {
  const { driver, frames } = deps;
  const admitted = await driver.admit({ kind: "message", content, attachments }, { caller });
  if (!admitted.ok) return admitted;
  const stream = beforeDrive(admitted.value, () => frames.openEventStream());
  const wait = driver.nextStart();
  const running = driver.drive(admitted.value, { caller });
  const done = running
    .then((outcome) => {
      if (!outcome.ok) return stream.error(outcome.code, outcome.message);
      const stopped = guardrailStop(outcome);
      return stopped ? stream.error(stopped.code, stopped.message) : undefined;
    })
    .finally(() => stream.close());
  deps.waitUntil(done);
  // The stream's 200 goes out once the message is stored (or the turn ended without storing it: its error frame is in
  // the stream), not while it is only in memory. The drive's own end is awaited, not the stream's: nothing reads the
  // stream before it is returned.
  if (!(await startedOrEnded(wait, running)) && options.refusalFirst) {
    const outcome = await running.catch(() => null);
    if (outcome && !outcome.ok) {
      await stream.readable.cancel().catch(() => {});
      return outcome;
    }
  }
  return { ok: true, value: stream.readable };
}

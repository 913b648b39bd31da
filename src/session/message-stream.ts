// A message sent over REST with `Accept: text/event-stream`: the turn it starts, answered as the stream of frames
// it logs. The admission's refusals (busy, an image the mode's model cannot read, the key past its model call
// limit, the org's budget) come before the stream opens, as ordinary errors.
import type { Outcome } from "../refusal";
import type { MessageAttachment } from "../wire/attachments";
import type { Caller } from "./caller";
import type { FrameHub } from "./frame-hub";
import { guardrailStop } from "./guardrail-stop";
import { beforeDrive } from "./turn-admission";
import type { TurnDriver } from "./turn-driver";

export interface MessageStreamDeps {
  driver: TurnDriver;
  frames: FrameHub;
  waitUntil: (work: Promise<unknown>) => void;
}

export async function streamMessage(
  deps: MessageStreamDeps,
  caller: Caller,
  content: string,
  attachments: readonly MessageAttachment[] = [],
): Promise<Outcome<ReadableStream<Uint8Array>>> {
  const { driver, frames } = deps;
  const admitted = await driver.admit({ kind: "message", content, attachments }, { caller });
  if (!admitted.ok) return admitted;
  const stream = beforeDrive(admitted.value, () => frames.openEventStream());
  const done = driver
    .drive(admitted.value, { caller })
    .then((outcome) => {
      if (!outcome.ok) return stream.error(outcome.code, outcome.message);
      const stopped = guardrailStop(outcome);
      return stopped ? stream.error(stopped.code, stopped.message) : undefined;
    })
    .finally(() => stream.close());
  deps.waitUntil(done);
  return { ok: true, value: stream.readable };
}

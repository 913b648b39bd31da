// A message sent over REST with `Accept: text/event-stream`: the turn it starts, answered as the stream of frames
// it logs. Refusals (busy, the key past its model call limit, an image the mode's model cannot read) come before the
// stream opens, as ordinary errors.
import { keyModelCallBudget, prepaidBudget, takeModelCall } from "../metering/model-call-limit";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { type Outcome, refuse } from "../refusal";
import type { MessageAttachment } from "../wire/attachments";
import { type Caller, callLogger } from "./caller";
import type { FrameHub } from "./frame-hub";
import type { TurnDriver } from "./turn-driver";

export interface MessageStreamDeps {
  env: Cloudflare.Env;
  driver: TurnDriver;
  frames: FrameHub;
  logger: JsonAdminLogger;
  waitUntil: (work: Promise<unknown>) => void;
}

export async function streamMessage(
  deps: MessageStreamDeps,
  caller: Caller,
  content: string,
  attachments: readonly MessageAttachment[] = [],
): Promise<Outcome<ReadableStream<Uint8Array>>> {
  const { env, driver, frames } = deps;
  driver.expirePause(caller);
  const refusal = driver.refusalToStart() ?? (await driver.attachmentRefusal(attachments, caller));
  if (refusal) return refusal;
  const logger = callLogger(deps.logger, caller);
  const grant = await takeModelCall(env.MODEL_CALL_LIMITER, caller.keyId, logger);
  if (!grant.ok) return refuse("rate_limit_exceeded", grant.message, { retryAfterSeconds: grant.retryAfterSeconds });
  const budget = prepaidBudget(keyModelCallBudget(env.MODEL_CALL_LIMITER, caller.keyId, logger));
  const stream = frames.openEventStream();
  const done = driver
    .drive((r, signal) => r.startTurn(content, signal, { attachments }), { caller, budget })
    .then((outcome) => (outcome.ok ? undefined : stream.error(outcome.code, outcome.message)))
    .finally(() => stream.close());
  deps.waitUntil(done);
  return { ok: true, value: stream.readable };
}

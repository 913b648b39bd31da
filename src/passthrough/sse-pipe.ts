// Relays an upstream event stream to the client byte for byte: each chunk is written on as it arrives
// (no buffering, no re-serialisation), with keepalives until the first byte and an error frame when the upstream
// fails, stalls or never answers after the response was committed, both in the upstream's wire (stream-frames.ts).
import { ApiError } from "../errors";
import type { AdminLogger } from "../observability/admin-logger";
import type { StreamScrubber } from "../secret-redaction";
import { ClientGone, type UpstreamExchange, UpstreamTimeout } from "./exchange";
import { type StreamFrames, streamFramesOf } from "./stream-frames";
import {
  credentialsOf,
  type FailedRoutes,
  routeClause,
  upstreamErrorBody,
  upstreamFailure,
  withRetryAfter,
} from "./upstream-errors";
import type { UsageHoldback } from "./usage-holdback";

export interface SseRelayOptions {
  exchange: UpstreamExchange;
  /** The upstream answer; its first-byte timer is already armed on `exchange`. */
  upstream: Promise<Response>;
  /** The client has waited one keepalive interval already: send the first comment at once. */
  keepaliveNow: boolean;
  keepaliveMs: number;
  idleTimeoutMs: number;
  /** Sees each chunk after it was handed to the client (usage accounting reads a copy of the stream). */
  onChunk(chunk: Uint8Array): void;
  /** Hears why the upstream failed, in the runtime's own words (for the log; the client gets a fixed text). */
  onFailure?(error: unknown): void;
  /** Takes the keys the upstream was sent out of its bytes as they pass (a key cut across chunks included). */
  scrubber?: StreamScrubber;
  /** Takes the secrets in play out of an upstream's error text. */
  redact?: (text: string) => string;
  /** Where an upstream's error answer that is not OpenAI-shaped is logged (the client gets a fixed text). */
  logger: AdminLogger;
  /** The model route being relayed, named in an error frame. */
  routes?: () => FailedRoutes;
  /** The keepalive and error frames of the upstream's wire (OpenAI's when absent). */
  frames?: StreamFrames;
  /** Takes back what asking the upstream for usage changed, for a client that did not ask (usage-holdback.ts). */
  holdback?: UsageHoldback;
}

/** How a relay ended: the upstream's stream whole, the client gone first, or the upstream failing. */
export type RelayOutcome = "complete" | "client_gone" | "failed";

export interface SseRelay {
  body: ReadableStream<Uint8Array>;
  /** Settles (never rejects) when the relay has ended, however it ended; every timer is cleared by then. */
  done: Promise<RelayOutcome>;
}

const encoder = new TextEncoder();
const LF = 0x0a;

export function relayEventStream(options: SseRelayOptions): SseRelay {
  const { exchange } = options;
  const frames = options.frames ?? streamFramesOf("openai");
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  // A client that disconnects cancels our readable, which errors the writable: stop the upstream too.
  writer.closed.catch(() => exchange.abort(new ClientGone()));

  const keepalive = () => {
    writer.write(frames.keepalive).catch(() => exchange.abort(new ClientGone()));
  };
  let keepaliveTimer: ReturnType<typeof setInterval> | null = setInterval(keepalive, options.keepaliveMs);
  const stopKeepalive = () => {
    if (keepaliveTimer !== null) clearInterval(keepaliveTimer);
    keepaliveTimer = null;
  };
  if (options.keepaliveNow) keepalive();

  async function send(bytes: Uint8Array): Promise<void> {
    try {
      await writer.write(bytes);
    } catch {
      throw new ClientGone();
    }
  }

  async function pump(): Promise<RelayOutcome> {
    let response: Response | undefined;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    // Whether the bytes so far end an event; a failure mid-event first closes that event.
    let atEventEnd = true;
    /** The upstream answered an error status after the client had its 200: an error frame, not an answer. */
    let upstreamRefused = false;
    let lastByte: number | undefined;
    try {
      response = await exchange.race(options.upstream);
      if (!response.ok) {
        const text = await exchange.race(response.text());
        stopKeepalive();
        const routes = options.routes?.();
        const context = {
          logger: options.logger,
          redact: options.redact ?? ((text: string) => text),
          ...(routes ? { credentials: credentialsOf(routes.route), route: routes.route.name } : {}),
        };
        const refused = upstreamErrorBody(response.status, text, context);
        await send(frames.error(withRetryAfter(refused.body, response.headers.get("retry-after")), refused.status));
        upstreamRefused = true;
      } else if (response.body) {
        reader = response.body.getReader();
        let first = true;
        for (;;) {
          const { done, value } = await exchange.race(reader.read());
          if (done) break;
          if (value.byteLength === 0) continue;
          exchange.pause();
          if (first) {
            first = false;
            stopKeepalive();
          }
          const before = value.byteLength >= 2 ? value[value.byteLength - 2] : lastByte;
          lastByte = value[value.byteLength - 1];
          atEventEnd = lastByte === LF && before === LF;
          const clean = options.scrubber ? options.scrubber.push(value) : value;
          const out = clean && options.holdback ? options.holdback.push(clean) : clean;
          if (out) await send(out);
          options.onChunk(value);
          // Idle time is the upstream's silence only: the clock runs while we wait for it, not for the client.
          exchange.arm("idle", options.idleTimeoutMs);
        }
      }
      exchange.disarm();
      stopKeepalive();
      // A key's start held at the end was no key: it goes out, through the holdback as every chunk does.
      const held = options.scrubber?.flush();
      const last = held && options.holdback ? options.holdback.push(held) : held;
      if (last) await send(last);
      const rest = options.holdback?.flush();
      if (rest) await send(rest);
      await writer.close();
      return upstreamRefused ? "failed" : "complete";
    } catch (error) {
      stopKeepalive();
      exchange.abort(error);
      reader?.cancel(error).catch(() => {});
      if (error instanceof ClientGone) return "client_gone";
      // A key's start the scrubber held is dropped: the stream failed, and it may be half a key.
      options.scrubber?.flush();
      const rest = options.holdback?.flush();
      if (rest) await writer.write(rest).catch(() => {});
      options.onFailure?.(error);
      const routes = options.routes?.();
      const failure =
        response === undefined || error instanceof UpstreamTimeout
          ? upstreamFailure(error, routes)
          : new ApiError(
              "upstream_stream_failed",
              `The upstream LLM stream failed before it ended${routeClause(routes)}.`,
            );
      const frame = frames.error(failure.toBody(), failure.status);
      try {
        if (!atEventEnd) await writer.write(encoder.encode("\n\n"));
        await writer.write(frame);
        await writer.close();
      } catch {
        // The client left while we were telling it: there is no one left to tell.
      }
      return "failed";
    } finally {
      stopKeepalive();
      exchange.disarm();
    }
  }

  return { body: readable, done: pump() };
}

// A streamed answer through the passthrough's `output` guardrails (the client's wire, after any translation). The
// events are parsed as they come and written again one by one. With a `block` or `redact` guardrail on `output`,
// the text deltas (and every event after the first of them) are held until the stream's end, when the assembled
// text is checked: nothing unchecked reaches the client, and a block ends the stream with the door's error event
// instead of the answer. Otherwise the stream keeps flowing, with masked values restored across deltas
// (MaskVault.restoreStream) and the assembled text checked at the end for the flags. Keepalive comments always pass,
// and a held stream writes its own while the upstream keeps talking.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { ApiError } from "../errors";
import type { MaskVault } from "../guardrails/guardrail-check";
import {
  deltaEvent,
  deltasOf,
  type GuardedDoor,
  isRecord,
  mapStrings,
  type TextDelta,
  withDeltas,
} from "./guardrail-texts";

export interface StreamChecks {
  door: GuardedDoor;
  /** A `block` or `redact` guardrail is on `output`: the text waits for its check. */
  hold: boolean;
  /** The request's masked values, when an `input` guardrail masked some: restored in what the client reads. */
  vault: MaskVault | null;
  /** A fresh vault with the same values, one a channel (each keeps its own cut placeholder). */
  channelVault: (() => MaskVault) | null;
  /** Checks each channel's assembled text (as the model wrote it): a refusal, or the text to send for each. */
  check(texts: ReadonlyMap<string, string>): Promise<{ blocked: ApiError | null; texts: ReadonlyMap<string, string> }>;
  /** The door's streamed error event for a refusal. */
  errorFrame(error: ApiError): Uint8Array;
  /** While the text is held: a keepalive comment when nothing was written for this long. */
  keepaliveMs: number;
  /** The stream ended (whole, cut or cancelled by the client): called once. */
  done(): void;
}

interface Held {
  message: EventSourceMessage;
  json: Record<string, unknown> | null;
  deltas: TextDelta[];
}

const encoder = new TextEncoder();

function frame(message: EventSourceMessage, data: string = message.data): string {
  let out = message.event ? `event: ${message.event}\n` : "";
  if (message.id !== undefined) out += `id: ${message.id}\n`;
  for (const line of data.split("\n")) out += `data: ${line}\n`;
  return `${out}\n`;
}

function parsed(data: string): Record<string, unknown> | null {
  if (!data.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(data);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

export function guardedEventStream(
  source: ReadableStream<Uint8Array>,
  checks: StreamChecks,
): ReadableStream<Uint8Array> {
  const { door } = checks;
  const reader = source.getReader();
  const decoder = new TextDecoder();
  let queue: string[] = [];
  /** Each channel's text as the model wrote it. */
  const texts = new Map<string, string>();
  const held: Held[] = [];
  let holding = false;
  /** Flowing with a vault: each channel's stream restore and its last delta event (to send what it held back). */
  const vaults = new Map<
    string,
    { vault: MaskVault; template: Record<string, unknown>; message: EventSourceMessage }
  >();
  let finished = false;
  let lastWrite = Date.now();
  const finish = () => {
    if (finished) return;
    finished = true;
    checks.done();
  };

  const flushVaults = () => {
    for (const [channel, entry] of vaults) {
      const rest = entry.vault.flush();
      const event = rest ? deltaEvent(door, entry.template, channel, rest) : null;
      if (event) queue.push(frame(entry.message, JSON.stringify(event)));
    }
  };

  const flowing = (message: EventSourceMessage, json: Record<string, unknown> | null, deltas: TextDelta[]) => {
    const { channelVault, vault } = checks;
    if (!vault || !channelVault || !json) {
      queue.push(frame(message));
      return;
    }
    if (deltas.length === 0) {
      flushVaults();
      queue.push(frame(message, JSON.stringify(mapStrings(json, (text) => vault.restore(text)))));
      return;
    }
    const byChannel = new Map(deltas.map((delta) => [delta.channel, delta.text]));
    const out = withDeltas(door, json, (channel) => {
      const text = byChannel.get(channel);
      if (text === undefined) return null;
      const entry = vaults.get(channel) ?? { vault: channelVault(), template: json, message };
      vaults.set(channel, { ...entry, template: json, message });
      return entry.vault.restoreStream(text) || null;
    });
    if (out) queue.push(frame(message, JSON.stringify(out)));
  };

  const parser = createParser({
    onEvent: (message) => {
      const json = parsed(message.data);
      const deltas = json ? deltasOf(door, json) : [];
      for (const delta of deltas) texts.set(delta.channel, (texts.get(delta.channel) ?? "") + delta.text);
      if (checks.hold && (holding || deltas.length > 0)) {
        holding = true;
        held.push({ message, json, deltas });
      } else flowing(message, json, deltas);
    },
    onComment: (comment) => queue.push(`: ${comment}\n\n`),
  });

  /** The held events with each channel's checked text in the first delta of the channel, its other deltas out. */
  const release = (checked: ReadonlyMap<string, string>) => {
    const sent = new Set<string>();
    const whole = new Map<string, string>();
    for (const [channel, text] of texts) whole.set(text, checked.get(channel) ?? text);
    const { vault } = checks;
    const rewrite = (text: string) => whole.get(text) ?? (vault ? vault.restore(text) : text);
    for (const { message, json, deltas } of held) {
      if (!json) {
        queue.push(frame(message));
      } else if (deltas.length > 0) {
        const out = withDeltas(door, json, (channel) => {
          if (sent.has(channel)) return null;
          sent.add(channel);
          return checked.get(channel) ?? null;
        });
        if (out) queue.push(frame(message, JSON.stringify(out)));
      } else queue.push(frame(message, JSON.stringify(mapStrings(json, rewrite))));
    }
  };

  const end = async () => {
    parser.feed(decoder.decode());
    if (!checks.hold) flushVaults();
    const result = await checks.check(texts);
    if (checks.hold) {
      if (result.blocked) queue.push(new TextDecoder().decode(checks.errorFrame(result.blocked)));
      else release(result.texts);
    }
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // Until something is written: events held, or half an event, must not stall the reader.
        for (;;) {
          const { done, value } = await reader.read();
          if (done) await end();
          else parser.feed(decoder.decode(value, { stream: true }));
          // A long answer held for its check must not look like a dead connection to the client.
          if (holding && queue.length === 0 && Date.now() - lastWrite >= checks.keepaliveMs) {
            queue.push(": keepalive\n\n");
          }
          const out = queue;
          queue = [];
          if (out.length > 0) {
            controller.enqueue(encoder.encode(out.join("")));
            lastWrite = Date.now();
          }
          if (done) {
            controller.close();
            finish();
            return;
          }
          if (out.length > 0) return;
        }
      } catch (error) {
        finish();
        throw error;
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
}

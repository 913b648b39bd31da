// Where a session's frames go: logged first (event log), then to every WebSocket of the object and every
// SSE stream of a running turn (a text delta reaches the turn's streams a moment before it is logged); and the
// per-socket frames (session_state, error, pong) and replays.

import type { DirectFrame, LoggedFrame, ServerFrame, SessionStateFrame } from "../wire/frames";
import type { EventLog } from "./event-log";

const encoder = new TextEncoder();

/**
 * How long a text delta may wait to be logged (and sent to the sockets) for the deltas after it: every log write is
 * a storage commit (billed by the rows it writes, and a commit the object's later messages wait for), so a stream's
 * deltas are logged about 20 times a second, not once per chunk; a quick answer's deltas are logged with its end.
 * The turn's SSE streams get each delta at once.
 */
export const DELTA_LOG_MS = 50;

type FrameSink = (frame: ServerFrame | (DirectFrame & { seq: number })) => Promise<void>;

export class FrameHub {
  private readonly streams = new Set<FrameSink>();
  /** Text deltas sent to the turn's streams, not yet logged nor sent to the sockets (see emit). */
  private unlogged: LoggedFrame[] = [];
  /** The timer that logs them, DELTA_LOG_MS after the first. */
  private deltaTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly events: EventLog,
    /** How long deltas wait for company before they are logged (a test may ask for longer or shorter). */
    private readonly deltaLogMs: number = DELTA_LOG_MS,
  ) {}

  /**
   * Writes the frame to the event log, then sends it to every socket and stream. A text delta goes to the turn's
   * streams first, and is logged (and sent to the sockets) DELTA_LOG_MS later, with the deltas that came meanwhile,
   * or before the next frame, whichever comes first, with the seq the streams were shown: a write holds every later
   * outgoing message of the object until it is stored, so logging first would hold each token back for a write of
   * its own. A stream belongs to its request and is never resumed by seq; a socket, which is, gets each frame only
   * once it is logged.
   */
  emit(frame: LoggedFrame): void {
    if (frame.type === "assistant_delta") {
      this.streamFirst(frame);
      return;
    }
    this.logUnlogged();
    this.logAndSend(frame);
    if (frame.type === "turn_completed") this.events.prune(null);
  }

  /**
   * Logs the deltas that wait now (and sends them to the sockets): what reads the turn's text from the log (a stopped
   * turn's answer) must find every delta the streams were shown.
   */
  flush(): void {
    this.logUnlogged();
  }

  /** The deltas sent to the streams so far: logged, and sent to the sockets, in order. */
  private logUnlogged(): void {
    if (this.deltaTimer !== null) {
      clearTimeout(this.deltaTimer);
      this.deltaTimer = null;
    }
    const frames = this.unlogged;
    this.unlogged = [];
    const first = this.events.lastSeq() + 1;
    for (const [i, frame] of frames.entries()) this.logAndSend(frame, { seq: first + i, streams: false });
  }

  private streamFirst(frame: LoggedFrame): void {
    const seq = this.events.lastSeq() + this.unlogged.length + 1;
    this.unlogged.push(frame);
    for (const stream of this.streams) void stream({ ...frame, seq });
    if (this.unlogged.length === 1) this.deltaTimer = setTimeout(() => this.logUnlogged(), this.deltaLogMs);
  }

  /** Logs the frame (with `seq`, when the streams were shown it already), then sends it to sockets and streams. */
  private logAndSend(frame: LoggedFrame, options: { seq: number; streams: boolean } | null = null): void {
    const { frame: logged, text } = this.events.append(frame, options?.seq ?? null);
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(text);
      } catch {
        // A socket that is closing misses the frame; it resumes from the log when it comes back.
      }
    }
    if (options?.streams === false) return;
    for (const stream of this.streams) void stream(logged);
  }

  /** A frame for one socket only, carrying the seq of the newest logged frame. */
  sendDirect(ws: WebSocket, frame: DirectFrame): void {
    ws.send(JSON.stringify({ ...frame, seq: this.events.lastSeq() }));
  }

  /** session_state, then every logged frame after `afterSeq` that this socket has not had live (those up to its connection). */
  replay(ws: WebSocket, afterSeq: number, connectedAtSeq: number, state: SessionStateFrame): void {
    const { frames, missing } = this.events.since(afterSeq);
    this.sendDirect(ws, { ...state, ...(missing ? { framesMissing: true } : {}) });
    if (missing) return;
    for (const frame of frames) if (frame.seq <= connectedAtSeq) ws.send(JSON.stringify(frame));
  }

  /**
   * An SSE stream that receives every frame emitted until it is closed; `error` writes a refusal frame. With
   * `untilTurnEnds`, it closes itself once that turn's turn_completed is written (a follower of a running turn).
   * `tap` sees each frame as it is written to the stream. `detach` stops the frames (and the tap) but keeps the stream
   * open for its own last events.
   */
  openEventStream(
    untilTurnEnds?: string,
    tap?: (frame: ServerFrame) => void,
  ): {
    readable: ReadableStream<Uint8Array>;
    error(code: string, message: string): Promise<void>;
    /** An event for this stream's reader alone (not logged, not a frame of the protocol). */
    direct(event: { type: string }): Promise<void>;
    detach(): void;
    close(): Promise<void>;
  } {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const write: FrameSink = (frame) => {
      tap?.(frame);
      const written = writer
        .write(encoder.encode(`id: ${frame.seq}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`))
        .catch(() => {});
      if (untilTurnEnds === undefined || frame.type !== "turn_completed" || frame.turnId !== untilTurnEnds)
        return written;
      this.streams.delete(write);
      return written.then(() => writer.close()).catch(() => {});
    };
    this.streams.add(write);
    return {
      readable,
      error: (code, message) => write({ type: "error", code, message, seq: this.events.lastSeq() }),
      direct: (event) =>
        writer.write(encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)).catch(() => {}),
      detach: () => {
        this.streams.delete(write);
      },
      close: () => {
        this.streams.delete(write);
        return writer.close().catch(() => {});
      },
    };
  }
}

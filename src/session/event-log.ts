// The session's event log: every frame that changes the session is written here, with its seq, before it is
// sent. Bounded: the newest frames and those of the open turn are kept; older ones are pruned. Its tables are the
// session's versioned schema's (session-schema.ts). A frame read back is parsed for what its reader needs: a replay
// sends it as it was sent then (a frame logged by older code keeps its older shape), the streamed text reads its
// text.
import { z } from "zod";
import type { LoggedFrame, ServerFrame } from "../wire/frames";
import { parseStored } from "./session-rows";

/** A logged frame as a replay sends it again: an object with its type and turn, the rest as it was sent. */
const ReplayedFrame = z.looseObject({ type: z.string(), turnId: z.string().nullable().optional() });
export type ReplayedFrame = z.infer<typeof ReplayedFrame> & { seq: number };

/**
 * The frames that make a turn's streamed text: its deltas, a restart or resumption that takes text back, a tool
 * call's start.
 */
const StreamedPiece = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("assistant_delta"), text: z.string() }),
  z.looseObject({ type: z.literal("assistant_restarted"), discardedChars: z.number().int() }),
  z.looseObject({ type: z.literal("turn_resumed"), discardedChars: z.number().int() }),
  z.looseObject({ type: z.literal("tool_call_started") }),
]);

export const DEFAULT_EVENT_LOG_SIZE = 1_000;

type Row = Record<string, SqlStorageValue>;

export class EventLog {
  constructor(
    private readonly sql: SqlStorage,
    private readonly keep: number = DEFAULT_EVENT_LOG_SIZE,
  ) {}

  /**
   * Writes the frame and returns it with its seq (strictly greater than every earlier one; the given one, which
   * must be lastSeq() + 1, or the next), and the frame's JSON with the seq, for sending (serialised once: the
   * stored text plus the seq).
   */
  append(frame: LoggedFrame, given: number | null = null): { frame: ServerFrame; text: string } {
    const json = JSON.stringify(frame);
    const row = this.sql
      .exec<Row>(
        "INSERT INTO events (seq, turn_id, frame_json, created_at) VALUES (?, ?, ?, ?) RETURNING seq",
        given,
        frame.turnId,
        json,
        new Date().toISOString(),
      )
      .one();
    const seq = Number(row.seq);
    this.last = Math.max(this.last ?? 0, seq);
    return { frame: { ...frame, seq }, text: `${json.slice(0, -1)},"seq":${seq}}` };
  }

  /**
   * The newest seq, read from storage once and then kept: this object is the log's only writer, and the frame hub
   * asks for it with every streamed token. Pruning never lowers it: the newest frame is kept, or `pruned_through`
   * is it.
   */
  private last: number | undefined;

  lastSeq(): number {
    if (this.last === undefined) {
      const row = this.sql.exec<Row>("SELECT MAX(seq) AS last FROM events").one();
      this.last = Math.max(Number(row.last ?? 0), this.prunedThrough());
    }
    return this.last;
  }

  /** Every kept frame after `afterSeq`, in order; `missing` when some of them were pruned. */
  since(afterSeq: number): { frames: ReplayedFrame[]; missing: boolean } {
    const frames = this.sql
      .exec<Row>("SELECT seq, frame_json FROM events WHERE seq > ? ORDER BY seq", afterSeq)
      .toArray()
      .map((r) => ({ ...parseStored(ReplayedFrame, r.frame_json, "frame"), seq: Number(r.seq) }));
    return { frames, missing: afterSeq < this.prunedThrough() };
  }

  /**
   * The text the turn's current model call has streamed so far: its assistant_delta frames since its last
   * tool call, with restarts applied (the open turn's frames are never pruned).
   */
  streamedText(turnId: string): string {
    let text = "";
    const rows = this.sql.exec<Row>(
      `SELECT frame_json FROM events WHERE turn_id = ?
         AND json_extract(frame_json, '$.type')
             IN ('assistant_delta', 'assistant_restarted', 'turn_resumed', 'tool_call_started')
       ORDER BY seq`,
      turnId,
    );
    for (const row of rows) {
      const frame = parseStored(StreamedPiece, row.frame_json, "frame");
      if (frame.type === "assistant_delta") text += frame.text;
      else if (frame.type === "assistant_restarted" || frame.type === "turn_resumed")
        text = text.slice(0, Math.max(0, text.length - frame.discardedChars));
      else text = "";
    }
    return text;
  }

  /** When the turn's newest frame was logged (its last sign of life), or null when it has none. */
  lastFrameAt(turnId: string): number | null {
    const row = this.sql.exec<Row>("SELECT MAX(created_at) AS at FROM events WHERE turn_id = ?", turnId).one();
    return typeof row.at === "string" ? Date.parse(row.at) : null;
  }

  /** Keeps the newest `keep` frames and every frame of the open turn. */
  prune(openTurnId: string | null): void {
    const cutoff = this.lastSeq() - this.keep;
    if (cutoff <= 0) return;
    const gone = this.sql
      .exec<Row>(
        "DELETE FROM events WHERE seq <= ? AND (turn_id IS NULL OR turn_id IS NOT ?) RETURNING seq",
        cutoff,
        openTurnId,
      )
      .toArray()
      .map((r) => Number(r.seq));
    if (gone.length > 0) {
      this.sql.exec(
        "UPDATE event_log_meta SET pruned_through = MAX(pruned_through, ?) WHERE id = 1",
        Math.max(...gone),
      );
    }
  }

  private prunedThrough(): number {
    return Number(
      this.sql.exec<Row>("SELECT pruned_through FROM event_log_meta WHERE id = 1").one().pruned_through ?? 0,
    );
  }
}

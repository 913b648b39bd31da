// The turn timeline's storage, in the session object's SQLite (the `turn_steps` table, schema version 4): each step
// the loop tells of is one row, written at once and synchronously like every other write of the object, so the
// timeline is the project's own record, kept whether or not traces are exported anywhere.
import { z } from "zod";
import type { TimelineStep } from "../observability/turn-observer";
import { timelineStepFields } from "../wire/timeline";
import { parseStored } from "./session-rows";

/**
 * A stored step: the wire's fields with its times as epoch milliseconds, as the loop gave them. `satisfies` holds it
 * to TimelineStep's keys, so a field added to the observer's step and not here fails the type check instead of being
 * dropped on the way out.
 */
const StoredStep = z.object({
  ...timelineStepFields,
  startedAt: z.number(),
  endedAt: z.number(),
} satisfies Record<keyof TimelineStep, z.ZodType>);

type Row = Record<string, SqlStorageValue>;

export class TurnSteps {
  constructor(private readonly sql: SqlStorage) {}

  add(turnId: string, step: TimelineStep): void {
    this.sql.exec(
      "INSERT INTO turn_steps (turn_id, kind, started_at, step_json) VALUES (?, ?, ?, ?)",
      turnId,
      step.kind,
      Math.round(step.startedAt),
      JSON.stringify(step),
    );
  }

  /** The turn's steps in the order they started (two that started in the same millisecond: as they were written). */
  forTurn(turnId: string): TimelineStep[] {
    return this.sql
      .exec<Row>("SELECT step_json FROM turn_steps WHERE turn_id = ? ORDER BY started_at, seq", turnId)
      .toArray()
      .map((row) => parseStored(StoredStep, row.step_json, "turn step"));
  }
}

// The session object's one alarm: while a turn works, a little ahead (an object that stops mid-turn wakes by then
// and resumes it); at a paused turn's expiry; when the event outbox has an event to send again, or the usage outbox
// rows to write; deleted while nothing runs or waits. Storage is touched only when the time changes.
export class SessionAlarm {
  /** The alarm as this object last read or set it (undefined: not read since the object started). */
  private at: number | null | undefined;

  /**
   * `also`: another part's wish for the alarm (the event outbox's next send); the earlier time wins. `by`: a wish that
   * any alarm at or before it meets (the usage outbox's: a turn's rows are written by the list write in a moment, and
   * the alarm only stands by should the object stop first), so an alarm already set no later than it stays as it is,
   * and a turn's end costs no alarm write more than it did.
   */
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly also: () => number | null = () => null,
    private readonly by: () => number | null = () => null,
  ) {}

  /** What the other parts want of the alarm now (null: nothing). */
  wanted(): number | null {
    return earliest(this.also(), this.by());
  }

  /** The alarm fired: it is no longer set. */
  fired(): void {
    this.at = null;
  }

  /**
   * One alarm at `wanted` (or earlier, should `also` want it), or none. The time is noted before the write is made,
   * so a later call (made while this one waits) compares with it, and the writes reach storage in the order of the
   * calls.
   */
  async sync(wanted: number | null): Promise<void> {
    let at = earliest(wanted, this.also());
    const by = this.by();
    if (this.at === undefined) {
      const stored = await this.storage.getAlarm();
      // A call made while this one read (or the alarm firing) knows better.
      if (this.at === undefined) this.at = stored;
    }
    if (by !== null && (at === null || at > by)) {
      const set = this.at;
      if (set !== null && set !== undefined && set <= by && set >= Date.now()) return;
      at = earliest(at, by);
    }
    if (this.at === at) return;
    this.at = at;
    if (at === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(at);
  }
}

/** The earlier of two wishes for the alarm (null: no wish). */
export function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

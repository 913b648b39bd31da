// The session object's one alarm: while a turn works, a little ahead (an object that stops mid-turn wakes by then
// and resumes it); at a paused turn's expiry; when the event outbox has an event to send again, or the usage outbox
// rows to write; deleted while nothing runs or waits. Storage is touched only when the time changes.
export class SessionAlarm {
  /** The alarm as this object last read or set it (undefined: not read since the object started). */
  private at: number | null | undefined;

  /** `also`: another part's wish for the alarm (the event outbox's next send); the earlier time wins. */
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly also: () => number | null = () => null,
  ) {}

  /** What the other parts want of the alarm now (null: nothing). */
  wanted(): number | null {
    return this.also();
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
    const other = this.also();
    const at = wanted === null ? other : other === null ? wanted : Math.min(wanted, other);
    if (this.at === undefined) {
      const stored = await this.storage.getAlarm();
      // A call made while this one read (or the alarm firing) knows better.
      if (this.at === undefined) this.at = stored;
    }
    if (this.at === at) return;
    this.at = at;
    if (at === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(at);
  }
}

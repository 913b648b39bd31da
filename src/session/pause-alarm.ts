// The session object's one alarm: set at a paused turn's expiry, deleted while no turn waits. Storage is touched
// only when the time changes.
export class PauseAlarm {
  /** The alarm as this object last read or set it (undefined: not read since the object started). */
  private at: number | null | undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** The alarm fired: it is no longer set. */
  fired(): void {
    this.at = null;
  }

  /** One alarm at `expiresAt`, or none. */
  async sync(expiresAt: number | null): Promise<void> {
    if (this.at === undefined) this.at = await this.storage.getAlarm();
    if (this.at === expiresAt) return;
    if (expiresAt === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(expiresAt);
    this.at = expiresAt;
  }
}

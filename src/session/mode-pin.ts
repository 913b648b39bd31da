// The mode version a session is pinned to (POST /context/sessions with `modeVersion`, for evals): its turns run with
// that version's snapshot instead of the catalog's current mode, and its mode cannot change. Kept in the object's
// storage (table mode_pin, session schema version 12), read once an object's life.
import { z } from "zod";
import { AgentMode } from "../modes/agent-mode";
import type { AgentModeCatalogService } from "../modes/catalog-service";

/** The pin: the mode's key, its version, and the mode as that version kept it. */
export interface ModePin {
  mode: string;
  version: number;
  snapshot: AgentMode;
}

const PinRow = z.object({ mode: z.string(), version: z.number().int(), snapshot_json: z.string() });

export class ModePins {
  /** The pin as last read or written; undefined until read. */
  private kept: ModePin | null | undefined;

  constructor(private readonly sql: SqlStorage) {}

  /** Pins the new session (written with it, once). */
  write(pin: ModePin): void {
    this.sql.exec(
      "INSERT INTO mode_pin (id, mode, version, snapshot_json) VALUES (1, ?, ?, ?)",
      pin.mode,
      pin.version,
      JSON.stringify(pin.snapshot),
    );
    this.kept = pin;
  }

  /** The session's pin; null when it runs its mode's current version. */
  pin(): ModePin | null {
    if (this.kept !== undefined) return this.kept;
    const row = this.sql.exec("SELECT mode, version, snapshot_json FROM mode_pin WHERE id = 1").toArray()[0];
    if (!row) {
      this.kept = null;
      return null;
    }
    const { mode, version, snapshot_json } = PinRow.parse(row);
    this.kept = { mode, version, snapshot: AgentMode.parse(JSON.parse(snapshot_json)) };
    return this.kept;
  }
}

/** The refusal's words when a pinned session is asked to change its mode. */
export function pinnedModeMessage(pin: ModePin): string {
  return `This session is pinned to version ${pin.version} of the mode '${pin.mode}': its mode cannot change. Start a new session for another mode.`;
}

/**
 * `catalog` as a pinned session reads it: the pinned mode's key answers the version's snapshot (its default flag as
 * the catalog has it now); every other key as the catalog answers it. `pin` is asked each time (it is in memory).
 */
export function pinnedCatalog(catalog: AgentModeCatalogService, pin: () => ModePin | null): AgentModeCatalogService {
  const swap = (mode: AgentMode): AgentMode => {
    const pinned = pin();
    return pinned && mode.key === pinned.mode ? { ...pinned.snapshot, isDefault: mode.isDefault } : mode;
  };
  return {
    getAllModes: async (signal) => (await catalog.getAllModes(signal)).map(swap),
    getMode: async (key, signal) => {
      const pinned = pin();
      if (pinned && key === pinned.mode) return pinned.snapshot;
      return catalog.getMode(key, signal);
    },
    getDefaultMode: async (signal) => swap(await catalog.getDefaultMode(signal)),
  };
}

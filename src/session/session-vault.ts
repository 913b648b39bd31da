// The session's mask vault in its storage (the `mask_vault` row, schema version 11): read once when a turn first
// needs it, kept on the object, and written back only when a check masked a value it had not seen. A later turn,
// or the object woken after an eviction, restores the same placeholders to the same values.

import type { VaultKeeper } from "../agent/turn-guardrails";
import { MaskVault } from "../guardrails/guardrail-check";

type Row = Record<string, SqlStorageValue>;

export class SessionVault implements VaultKeeper {
  private kept: MaskVault | null = null;
  /** The vault's JSON as storage holds it ("" before it was read). */
  private written = "";

  constructor(private readonly sql: SqlStorage) {}

  vault(): MaskVault {
    if (this.kept) return this.kept;
    const row = this.sql.exec<Row>("SELECT vault_json FROM mask_vault WHERE id = 1").toArray()[0];
    this.written = typeof row?.vault_json === "string" ? row.vault_json : "{}";
    this.kept = MaskVault.from(JSON.parse(this.written));
    return this.kept;
  }

  save(): void {
    if (!this.kept) return;
    const json = JSON.stringify(this.kept.toJSON());
    if (json === this.written) return;
    this.sql.exec(
      "INSERT INTO mask_vault (id, vault_json) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET vault_json = excluded.vault_json",
      json,
    );
    this.written = json;
  }
}

// The session's placeholders (src/guardrails/mask-vault.ts): numbering, restore, streams, and its stored form.
import { describe, expect, it } from "vitest";
import { MaskVault } from "../../src/guardrails/mask-vault";

describe("MaskVault", () => {
  it("numbers placeholders per type and gives one value one placeholder", () => {
    const vault = new MaskVault();
    expect(vault.mask("email", "a@x.io")).toBe("[EMAIL_1]");
    expect(vault.mask("phone", "+4420")).toBe("[PHONE_1]");
    expect(vault.mask("email", "b@x.io")).toBe("[EMAIL_2]");
    expect(vault.mask("email", "a@x.io")).toBe("[EMAIL_1]");
    expect(vault.mask("openai", "sk-1")).toBe("[SECRET_1]");
    expect(vault.mask("deny", "falcon")).toBe("[DENIED_1]");
  });

  it("restores every known placeholder and leaves unknown ones and redacted ones", () => {
    const vault = new MaskVault();
    vault.mask("email", "a@x.io");
    const redacted = vault.redact("email");
    expect(redacted).toBe("[EMAIL_2]");
    expect(vault.restore(`Mail [EMAIL_1], not ${redacted} nor [EMAIL_9].`)).toBe(
      "Mail a@x.io, not [EMAIL_2] nor [EMAIL_9].",
    );
  });

  it("restores a stream whose pieces cut a placeholder, holding back only the possible start", () => {
    const vault = new MaskVault();
    vault.mask("national_id", "123-45-6789");
    const pieces = ["Your id is [NA", "TIONAL_", "ID_1", "] and [x] [", "ok [EMA"];
    const out = pieces.map((piece) => vault.restoreStream(piece));
    expect(out).toEqual(["Your id is ", "", "", "123-45-6789 and [x] ", "[ok "]);
    expect(vault.flush()).toBe("[EMA");
  });

  it("survives toJSON and from, numbering on after what it held", () => {
    const vault = new MaskVault();
    vault.mask("email", "a@x.io");
    vault.redact("email");
    const again = MaskVault.from(JSON.parse(JSON.stringify(vault.toJSON())));
    expect(again.restore("[EMAIL_1]")).toBe("a@x.io");
    expect(again.mask("email", "a@x.io")).toBe("[EMAIL_1]");
    expect(again.mask("email", "c@x.io")).toBe("[EMAIL_3]");
    expect(MaskVault.from("not a vault").toJSON()).toEqual({});
  });
});

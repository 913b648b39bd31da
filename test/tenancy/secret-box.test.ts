// The SecretBox's envelope: a value opens only for the org and name it was sealed for, with the key that wrapped its
// data key (or the previous one during a rotation); a changed ciphertext does not open.
import { describe, expect, it } from "vitest";
import { SecretBox, SecretBoxError } from "../../src/tenancy/secret-box";

const KEY = "the-secrets-key-of-this-deployment-0123456789";
const OTHER = "another-secrets-key-of-some-deployment-98765";

describe("SecretBox", () => {
  it("opens what it sealed, and never stores the value in the clear", async () => {
    const box = await SecretBox.of({ key: KEY, previousKey: null });
    const sealed = await box.seal("org-a", "OPENAI_KEY", "sk-live-value-0123");
    expect(JSON.stringify(sealed)).not.toContain("sk-live-value");
    expect(await box.open("org-a", "OPENAI_KEY", sealed)).toBe("sk-live-value-0123");
  });

  it("seals the same value differently each time (a fresh data key and IV)", async () => {
    const box = await SecretBox.of({ key: KEY, previousKey: null });
    const [a, b] = await Promise.all([box.seal("o", "K", "same"), box.seal("o", "K", "same")]);
    expect(a.valueCiphertext).not.toBe(b.valueCiphertext);
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
  });

  it("does not open a row moved to another org or name", async () => {
    const box = await SecretBox.of({ key: KEY, previousKey: null });
    const sealed = await box.seal("org-a", "OPENAI_KEY", "sk-live-value-0123");
    await expect(box.open("org-b", "OPENAI_KEY", sealed)).rejects.toBeInstanceOf(SecretBoxError);
    await expect(box.open("org-a", "OTHER_KEY", sealed)).rejects.toBeInstanceOf(SecretBoxError);
  });

  it("does not open a changed ciphertext", async () => {
    const box = await SecretBox.of({ key: KEY, previousKey: null });
    const sealed = await box.seal("org-a", "K", "value");
    const flipped = `${sealed.valueCiphertext.slice(0, -4)}${sealed.valueCiphertext.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`;
    await expect(box.open("org-a", "K", { ...sealed, valueCiphertext: flipped })).rejects.toBeInstanceOf(
      SecretBoxError,
    );
  });

  it("opens a row of the previous key during a rotation, and wraps its data key again with the new one", async () => {
    const before = await SecretBox.of({ key: OTHER, previousKey: null });
    const sealed = await before.seal("org-a", "K", "value");
    const rotating = await SecretBox.of({ key: KEY, previousKey: OTHER });
    expect(await rotating.open("org-a", "K", sealed)).toBe("value");
    const rewrapped = await rotating.rewrap("org-a", "K", sealed);
    expect(rewrapped?.keyId).toBe(rotating.keyId);
    const after = await SecretBox.of({ key: KEY, previousKey: null });
    expect(await after.open("org-a", "K", { ...sealed, ...rewrapped })).toBe("value");
    expect(await after.rewrap("org-a", "K", { ...sealed, ...rewrapped })).toBeNull();
  });

  it("names the setting to make when a row's wrapping key is neither key", async () => {
    const sealed = await (await SecretBox.of({ key: OTHER, previousKey: null })).seal("o", "K", "v");
    const box = await SecretBox.of({ key: KEY, previousKey: null });
    await expect(box.open("o", "K", sealed)).rejects.toThrow(/SECRETS_KEY_PREVIOUS/);
  });
});

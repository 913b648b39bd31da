// The values a session's mask vault hides, replaced by their placeholders in text the model is about to read. The
// vault found them when they first came (the person's message, a tool's result); here they are only looked up,
// so a message stored with its values never reaches the model with them. Longer values go first, so a value that
// holds another (an email holding a name that is also masked) is replaced whole.

/** `placeholders`: placeholder → value, as the vault's toJSON gives them. */
export function maskKnownValues(text: string, placeholders: Readonly<Record<string, string>>): string {
  if (text.length === 0) return text;
  const pairs = Object.entries(placeholders)
    // A redaction's placeholder stands for itself: nothing to hide.
    .filter(([placeholder, value]) => value.length > 0 && value !== placeholder)
    .sort((a, b) => b[1].length - a[1].length);
  let out = text;
  for (const [placeholder, value] of pairs) {
    if (out.includes(value)) out = out.split(value).join(placeholder);
  }
  return out;
}

// The placeholders of one session: `[EMAIL_1]` stands for a value the model must not read (a `mask`), numbered per
// vault and per type, the same value always getting the same placeholder; and the way back, for what the person
// sees, whole or as a stream whose pieces may cut a placeholder in two. A `redact` takes a number too (so a later
// mask never reuses it) but keeps no value: its placeholder stands for itself.

/** The label a find's type is written with: a pii entity upper-cased, any secret `SECRET`, a denied word `DENIED`. */
export function placeholderLabel(type: string): string {
  switch (type) {
    case "email":
    case "phone":
    case "card":
    case "iban":
    case "national_id":
    case "ip":
      return type.toUpperCase();
    case "deny":
      return "DENIED";
    default:
      return "SECRET";
  }
}

const PLACEHOLDER = /\[(EMAIL|PHONE|CARD|IBAN|NATIONAL_ID|IP|SECRET|DENIED)_(\d{1,6})\]/g;
/** The start of a placeholder cut at the end of a stream's piece (`[`, `[EMA`, `[EMAIL_1`). */
const PLACEHOLDER_START = /\[(?:[A-Z_]{0,11}|[A-Z_]{2,11}_\d{0,6})$/;

export class MaskVault {
  /** Placeholder -> value (a redacted one maps to itself). */
  private readonly values = new Map<string, string>();
  /** Label + value -> placeholder, so one value gets one placeholder. */
  private readonly byValue = new Map<string, string>();
  private readonly counters = new Map<string, number>();
  /** What restoreStream holds back: a piece that may be the start of a placeholder. */
  private held = "";

  /** A vault as toJSON wrote it (anything else, or nothing: an empty vault). */
  static from(json: unknown): MaskVault {
    const vault = new MaskVault();
    if (typeof json !== "object" || json === null || Array.isArray(json)) return vault;
    for (const [placeholder, value] of Object.entries(json)) {
      const match = /^\[([A-Z_]+)_(\d+)\]$/.exec(placeholder);
      if (!match || typeof value !== "string") continue;
      const [, label = "", number = "0"] = match;
      vault.values.set(placeholder, value);
      if (value !== placeholder) vault.byValue.set(`${label}\u0000${value}`, placeholder);
      vault.counters.set(label, Math.max(vault.counters.get(label) ?? 0, Number(number)));
    }
    return vault;
  }

  toJSON(): Record<string, string> {
    return Object.fromEntries(this.values);
  }

  get size(): number {
    return this.values.size;
  }

  private next(label: string): string {
    const number = (this.counters.get(label) ?? 0) + 1;
    this.counters.set(label, number);
    return `[${label}_${number}]`;
  }

  /** The placeholder that hides `value` (found as `type`) from the model, kept to be restored. */
  mask(type: string, value: string): string {
    const label = placeholderLabel(type);
    const key = `${label}\u0000${value}`;
    const known = this.byValue.get(key);
    if (known) return known;
    const placeholder = this.next(label);
    this.values.set(placeholder, value);
    this.byValue.set(key, placeholder);
    return placeholder;
  }

  /** A placeholder for a value that is dropped: numbered like the masks, restored to itself. */
  redact(type: string): string {
    const placeholder = this.next(placeholderLabel(type));
    this.values.set(placeholder, placeholder);
    return placeholder;
  }

  /** Every known placeholder in `text` back to its value. */
  restore(text: string): string {
    if (this.values.size === 0 || !text.includes("[")) return text;
    return text.replace(PLACEHOLDER, (placeholder) => this.values.get(placeholder) ?? placeholder);
  }

  /** A stream's next piece, restored as far as is safe: a possible start of a placeholder waits for the next piece. */
  restoreStream(delta: string): string {
    const text = this.held + delta;
    const cut = PLACEHOLDER_START.exec(text);
    if (cut) {
      this.held = text.slice(cut.index);
      return this.restore(text.slice(0, cut.index));
    }
    this.held = "";
    return this.restore(text);
  }

  /** What the stream held back at its end. */
  flush(): string {
    const text = this.held;
    this.held = "";
    return this.restore(text);
  }
}

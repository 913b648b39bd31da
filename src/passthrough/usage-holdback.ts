// Metering a stream whose client did not ask for its usage: the upstream is asked for it
// (`stream_options.include_usage`), and what that changes is taken back out before the client sees it, so the
// client receives exactly the bytes it would have received had we not asked. Asking for usage changes two things
// in an OpenAI stream: every chunk carries `"usage":null`, and one chunk more (`"choices":[]` with the usage)
// comes before `[DONE]`. The first is removed from each event's data (an unescaped `"` cannot occur inside a JSON
// string, so `"usage":null` with its comma is always the key and its value), the second is held back whole.
// Events are cut at their blank line, so a chunk that ends mid-event waits for the rest of it.

const EVENT_END = /\r?\n\r?\n/g;
const USAGE_NULL = /,\s*"usage"\s*:\s*null(?=\s*[,}])|"usage"\s*:\s*null\s*,/g;

/** Whether an event's data is the usage-only chunk the client did not ask for. */
function isUsageOnly(data: string): boolean {
  if (!data.includes('"usage"') || !data.includes('"choices"')) return false;
  try {
    const chunk = JSON.parse(data) as { choices?: unknown; usage?: unknown };
    return Array.isArray(chunk.choices) && chunk.choices.length === 0 && typeof chunk.usage === "object";
  } catch {
    return false;
  }
}

function filterEvent(event: string): string | null {
  const lines = event.split("\n");
  const data = lines
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trimStart())
    .join("\n");
  if (data && isUsageOnly(data)) return null;
  if (!event.includes('"usage"')) return event;
  return lines.map((l) => (l.startsWith("data:") ? l.replace(USAGE_NULL, "") : l)).join("\n");
}

export class UsageHoldback {
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();
  private pending = "";

  /** The bytes of the complete events in `chunk` (and before it), filtered; null when none is complete yet. */
  push(chunk: Uint8Array): Uint8Array | null {
    this.pending += this.decoder.decode(chunk, { stream: true });
    // An event ends at a blank line, written with LF or CRLF line ends.
    let end = -1;
    for (const match of this.pending.matchAll(EVENT_END)) end = match.index + match[0].length;
    if (end < 0) return null;
    const complete = this.pending.slice(0, end);
    this.pending = this.pending.slice(end);
    const out = complete
      .split(/(?<=\r?\n\r?\n)/)
      .map((event) => filterEvent(event))
      .filter((event): event is string => event !== null)
      .join("");
    return out ? this.encoder.encode(out) : null;
  }

  /** What is left at the end of the stream (an event cut short), unfiltered. */
  flush(): Uint8Array | null {
    const rest = this.pending + this.decoder.decode();
    this.pending = "";
    return rest ? this.encoder.encode(rest) : null;
  }
}

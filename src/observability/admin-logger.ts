// AdminLogger: structured JSON log lines (one per call) that Workers Logs indexes.
export type LogLevel = "Verbose" | "Message" | "Warning" | "Error";

/** AGN-005 §7: custom events carry an array of key/value pairs, not a dictionary. */
export type KeyValuePair = readonly [key: string, value: string];

export interface AdminLogger {
  addError(tag: string, message: string, pairs?: readonly KeyValuePair[]): void;
  addException(tag: string, error: unknown, pairs?: readonly KeyValuePair[]): void;
  addCustomEvent(level: LogLevel, tag: string, message: string, pairs?: readonly KeyValuePair[]): void;
}

type Sink = (line: string, level: LogLevel) => void;

const consoleSink: Sink = (line, level) => {
  if (level === "Error") console.error(line);
  else if (level === "Warning") console.warn(line);
  else console.log(line);
};

/** Writes each entry as one JSON line. Callers never pass secrets; keys are never logged. */
export class JsonAdminLogger implements AdminLogger {
  constructor(
    private readonly base: Readonly<Record<string, string>> = {},
    private readonly sink: Sink = consoleSink,
  ) {}

  /** A logger whose every line also carries these fields (a session id, a request id). */
  with(fields: Readonly<Record<string, string>>): JsonAdminLogger {
    return new JsonAdminLogger({ ...this.base, ...fields }, this.sink);
  }

  addError(tag: string, message: string, pairs: readonly KeyValuePair[] = []): void {
    this.write("Error", { kind: "error", tag, message }, pairs);
  }

  addException(tag: string, error: unknown, pairs: readonly KeyValuePair[] = []): void {
    const err = error instanceof Error ? error : new Error(String(error));
    this.write(
      "Error",
      { kind: "exception", tag, message: err.message, errorName: err.name, stack: err.stack ?? "" },
      pairs,
    );
  }

  addCustomEvent(level: LogLevel, tag: string, message: string, pairs: readonly KeyValuePair[] = []): void {
    this.write(level, { kind: "event", tag, message }, pairs);
  }

  private write(level: LogLevel, entry: Record<string, string>, pairs: readonly KeyValuePair[]): void {
    const line: Record<string, string> = { level, ...this.base, ...entry };
    for (const [key, value] of pairs) line[key] = value;
    this.sink(JSON.stringify(line), level);
  }
}

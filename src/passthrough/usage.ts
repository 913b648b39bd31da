// Token usage the upstream reports (a JSON answer's `usage`, a stream's `include_usage` chunk or the
// Responses API's `response.completed` event), read from a copy on the side and written to D1 later.
import { createParser } from "eventsource-parser";
import { z } from "zod";

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

const count = z.number().int().nonnegative();
// Chat and legacy completions and embeddings say prompt/completion; the Responses API says input/output.
const UsageJson = z
  .object({
    prompt_tokens: count.optional(),
    completion_tokens: count.optional(),
    input_tokens: count.optional(),
    output_tokens: count.optional(),
    total_tokens: count.optional(),
  })
  .transform((u): TokenUsage | null => {
    const prompt = u.prompt_tokens ?? u.input_tokens;
    const completion = u.completion_tokens ?? u.output_tokens ?? 0;
    if (prompt === undefined && u.total_tokens === undefined) return null;
    const promptTokens = prompt ?? 0;
    return { promptTokens, completionTokens: completion, totalTokens: u.total_tokens ?? promptTokens + completion };
  });
const WithUsage = z.object({
  usage: UsageJson.nullish(),
  response: z.object({ usage: UsageJson.nullish() }).nullish(),
});

/** The usage a parsed answer or chunk carries, if any. */
export function usageOf(value: unknown): TokenUsage | null {
  const parsed = WithUsage.safeParse(value);
  if (!parsed.success) return null;
  return parsed.data.usage ?? parsed.data.response?.usage ?? null;
}

export function usageOfJson(bytes: ArrayBuffer): TokenUsage | null {
  try {
    return usageOf(JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    return null;
  }
}

/**
 * Watches an event stream's bytes for the last usage it reports. It only reads: the bytes reach the
 * client before `push` sees them, and only events whose data mentions "usage" are parsed as JSON.
 */
export class SseUsageScanner {
  private readonly decoder = new TextDecoder();
  private readonly parser = createParser({ onEvent: (event) => this.event(event.data) });
  usage: TokenUsage | null = null;

  push(chunk: Uint8Array): void {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
  }

  private event(data: string): void {
    if (!data.includes('"usage"')) return;
    try {
      this.usage = usageOf(JSON.parse(data)) ?? this.usage;
    } catch {
      // An event that is not JSON carries no usage; the client gets it unchanged all the same.
    }
  }
}

export interface UsageRecord extends TokenUsage {
  org: string;
  keyId: string;
  endpoint: string;
  /** The model route that served the call. */
  route: string;
  /** The model sent upstream. */
  model: string;
}

/** How long rows wait for company before one D1 batch writes them all. */
const BATCH_WINDOW_MS = 100;
/** D1 runs a batch as one transaction; past this many rows, write at once. */
const BATCH_MAX_ROWS = 100;

interface Batch {
  rows: UsageRecord[];
  written: Promise<void>;
  flushNow(): void;
}

const open = new WeakMap<D1Database, Batch>();

/**
 * Queues a usage row and resolves when the batch holding it is written. One D1 round trip per batch
 * instead of per request: a busy isolate writes tens of rows at once, off every client's path. The
 * request that opens a batch keeps it alive (its waitUntil waits for the write), so no row is lost
 * when the isolate goes idle; the others wait for the same promise in their own waitUntil.
 */
export function recordUsage(db: D1Database, record: UsageRecord): Promise<void> {
  let batch = open.get(db);
  if (!batch) batch = openBatch(db);
  batch.rows.push(record);
  if (batch.rows.length >= BATCH_MAX_ROWS) batch.flushNow();
  return batch.written;
}

function openBatch(db: D1Database): Batch {
  const rows: UsageRecord[] = [];
  let flush: () => void = () => {};
  const due = new Promise<void>((resolve) => {
    const timer = setTimeout(() => flush(), BATCH_WINDOW_MS);
    flush = () => {
      clearTimeout(timer);
      // Closed before the write starts: rows queued from now on open the next batch.
      if (open.get(db) === batch) open.delete(db);
      resolve();
    };
  });
  const batch: Batch = { rows, written: due.then(() => writeRows(db, rows)), flushNow: () => flush() };
  open.set(db, batch);
  return batch;
}

const MODEL_NAME_CHARS = 256;

async function writeRows(db: D1Database, rows: UsageRecord[]): Promise<void> {
  const insert = db.prepare(
    "INSERT INTO usage_records (id, org, key_id, endpoint, route, model, prompt_tokens, completion_tokens, total_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  await db.batch(
    rows.map((r) =>
      insert.bind(
        crypto.randomUUID(),
        r.org,
        r.keyId,
        r.endpoint,
        r.route,
        // The model name is the client's own text: kept short, so one odd request cannot fail a whole batch.
        r.model.slice(0, MODEL_NAME_CHARS),
        r.promptTokens,
        r.completionTokens,
        r.totalTokens,
      ),
    ),
  );
}

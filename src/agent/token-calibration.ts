// Our token estimate (src/token-estimate.ts, four characters a token) calibrated to the tokens a route's model
// reports: after each answer, the ratio of the `promptTokens` it reported (every input token, cached or not) to our
// estimate of the request we sent is kept for the route that served it, so every budget can be counted in that
// model's tokens. Kept on the session object per route name (a session belongs to one org, so per org and route), in
// memory and in the object's storage (session_token_ratios), so an object woken after eviction keeps its ratios: one
// that forgot them would size its history for four characters a token on a model that counts more, and overshoot.
// A refusal for length whose words give the model's count (context-refusal.ts) is a report too.
import { estimateTokens } from "../token-estimate";
import type { ChatMessage, ChatTool } from "../wire/openai";
import { IMAGE_TOKENS } from "./attachment-content";

/** The bounds of the ratio (model tokens per estimated token): a report outside them is taken as the bound. */
export const MIN_TOKEN_RATIO = 0.25;
export const MAX_TOKEN_RATIO = 4;
/** The weight of a new report against the ratio so far (the first report is taken whole). */
const SMOOTHING = 0.5;
/** A ratio is written to storage when it moved by more than this share since the last write (or on its first). */
const WRITE_CHANGE = 0.02;
/**
 * A report below this share of the previous one, for a request we estimate at least as large, is not a whole prompt
 * count: servers that reuse their KV cache (Ollama, llama.cpp) report only the tokens they evaluated. It is ignored.
 */
const PARTIAL_REPORT = 0.5;

/**
 * Our estimate of a request as it is sent: the JSON of its messages and its tools, with each image counted as
 * IMAGE_TOKENS (the history budget's rule, attachment-content.ts), never by the length of its base64.
 */
export function requestEstimate(messages: readonly ChatMessage[], tools: readonly ChatTool[] = []): number {
  let images = 0;
  const json = JSON.stringify(messages, (_key, value: unknown) => {
    if (isImagePart(value)) {
      images++;
      return { type: "image_url" };
    }
    return value;
  });
  const toolChars = tools.length > 0 ? JSON.stringify(tools).length : 0;
  return estimateTokens(json.length + toolChars) + images * IMAGE_TOKENS;
}

function isImagePart(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { type?: unknown }).type === "image_url";
}

/** A route's last report: what we estimated the request at (calibrated as it stood then) and what its model said. */
export interface CalibrationReport {
  estimatedTokens: number;
  reportedTokens: number;
}

/** A route's ratio and last report as the session object stores them. */
export interface StoredRatio extends CalibrationReport {
  route: string;
  ratio: number;
}

/** Where the ratios outlive the object's memory (the session object's SQLite: SessionStore). */
export interface RatioStorage {
  tokenRatios(): StoredRatio[];
  saveTokenRatio(row: StoredRatio): void;
}

export class TokenCalibration {
  private readonly ratios = new Map<string, number>();
  private readonly reports = new Map<string, CalibrationReport>();
  /** The ratio last written per route. */
  private readonly written = new Map<string, number>();
  private loaded = false;

  constructor(private readonly storage?: RatioStorage) {}

  /** The ratios stored before the object woke, read on first use. */
  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    for (const row of this.storage?.tokenRatios() ?? []) {
      this.ratios.set(row.route, row.ratio);
      this.written.set(row.route, row.ratio);
      this.reports.set(row.route, { estimatedTokens: row.estimatedTokens, reportedTokens: row.reportedTokens });
    }
  }

  /** The last request on `route` weighed against its model's report (null before any). */
  lastReport(route: string): CalibrationReport | null {
    this.load();
    return this.reports.get(route) ?? null;
  }

  /** Model tokens per estimated token on `route` (1 until its model has reported usage). */
  ratio(route: string): number {
    this.load();
    return this.ratios.get(route) ?? 1;
  }

  /** A count of estimated tokens, in `route`'s model's tokens. */
  modelTokens(route: string, estimated: number): number {
    return Math.ceil(estimated * this.ratio(route));
  }

  /** A request's estimate on `route` was `estimated`; its model reported `reported` prompt tokens for it. */
  observe(route: string, estimated: number, reported: number): void {
    if (!(estimated > 0) || !(reported > 0)) return;
    this.load();
    const before = this.ratios.get(route);
    const estimatedTokens = Math.ceil(estimated * (before ?? 1));
    const previous = this.reports.get(route);
    if (previous && estimatedTokens >= previous.estimatedTokens && reported < previous.reportedTokens * PARTIAL_REPORT)
      return;
    const seen = Math.min(MAX_TOKEN_RATIO, Math.max(MIN_TOKEN_RATIO, reported / estimated));
    const ratio = before === undefined ? seen : before * (1 - SMOOTHING) + seen * SMOOTHING;
    const report = { estimatedTokens, reportedTokens: reported };
    this.reports.set(route, report);
    this.ratios.set(route, ratio);
    const written = this.written.get(route);
    if (this.storage && (written === undefined || Math.abs(ratio / written - 1) > WRITE_CHANGE)) {
      this.storage.saveTokenRatio({ route, ratio, ...report });
      this.written.set(route, ratio);
    }
  }

  /**
   * The model refused the request for its length and its words gave its count (`reported`, context-refusal.ts):
   * the count is taken whole (not averaged in), so the next request is sized by it.
   */
  refused(route: string, estimated: number, reported: number): void {
    this.load();
    this.ratios.delete(route);
    this.reports.delete(route);
    this.observe(route, estimated, reported);
  }
}

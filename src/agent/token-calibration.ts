// Our token estimate (src/token-estimate.ts, four characters a token) calibrated to the tokens a route's model
// reports: after each answer, the ratio of the `promptTokens` it reported (every input token, cached or not) to our
// estimate of the request we sent is kept for the route that served it, so every budget can be counted in that
// model's tokens. Kept on the session object (in memory, per route name; a session belongs to one org, so per org
// and route): an object woken after eviction starts again from the four-characters rule and is calibrated by its
// next answer.
import { estimateTokens } from "../token-estimate";
import type { ChatMessage, ChatTool } from "../wire/openai";

/** The bounds of the ratio (model tokens per estimated token): a report outside them is taken as the bound. */
export const MIN_TOKEN_RATIO = 0.25;
export const MAX_TOKEN_RATIO = 4;
/** The weight of a new report against the ratio so far (the first report is taken whole). */
const SMOOTHING = 0.5;

/** Our estimate of a request as it is sent: the JSON of its messages and its tools. */
export function requestEstimate(messages: readonly ChatMessage[], tools: readonly ChatTool[] = []): number {
  return estimateTokens(JSON.stringify(messages).length + (tools.length > 0 ? JSON.stringify(tools).length : 0));
}

/** A route's last report: what we estimated the request at (calibrated as it stood then) and what its model said. */
export interface CalibrationReport {
  estimatedTokens: number;
  reportedTokens: number;
}

export class TokenCalibration {
  private readonly ratios = new Map<string, number>();
  private readonly reports = new Map<string, CalibrationReport>();

  /** The last request on `route` weighed against its model's report (null before any). */
  lastReport(route: string): CalibrationReport | null {
    return this.reports.get(route) ?? null;
  }

  /** Model tokens per estimated token on `route` (1 until its model has reported usage). */
  ratio(route: string): number {
    return this.ratios.get(route) ?? 1;
  }

  /** A count of estimated tokens, in `route`'s model's tokens. */
  modelTokens(route: string, estimated: number): number {
    return Math.ceil(estimated * this.ratio(route));
  }

  /** A request's estimate on `route` was `estimated`; its model reported `reported` prompt tokens for it. */
  observe(route: string, estimated: number, reported: number): void {
    if (!(estimated > 0) || !(reported > 0)) return;
    const seen = Math.min(MAX_TOKEN_RATIO, Math.max(MIN_TOKEN_RATIO, reported / estimated));
    const before = this.ratios.get(route);
    this.reports.set(route, { estimatedTokens: Math.ceil(estimated * (before ?? 1)), reportedTokens: reported });
    this.ratios.set(route, before === undefined ? seen : before * (1 - SMOOTHING) + seen * SMOOTHING);
  }
}

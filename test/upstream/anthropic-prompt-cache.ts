// The scripted Anthropic upstream's prompt cache, as Anthropic documents its behaviour
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching): a request is read as a sequence of blocks
// in the order Anthropic hashes it (each tool definition, then the system blocks, then each message's content
// blocks); a block with `cache_control` is a breakpoint, and the prefix ending there (cumulative, without the
// `cache_control` markers themselves) is written to the cache when it is at least `minTokens` long. A later request
// reads the longest cached prefix found at a breakpoint or at one of the 20 block boundaries before it. Tokens are
// counted by one documented rule: a quarter of the characters of a block's JSON text (without cache_control),
// rounded up. Entries live 5 minutes, or 1 hour for `ttl: "1h"`, from their last use.
import { createHash } from "node:crypto";

/** How far before a breakpoint Anthropic looks for an earlier cached prefix. */
const LOOKBACK_BLOCKS = 20;
const TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

interface Block {
  tokens: number;
  /** The block's ttl when it is a breakpoint. */
  breakpoint: "5m" | "1h" | null;
  text: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A block's cached form: a string content or system is one text block, as Anthropic reads it. */
function blockOf(value: unknown, charsPerToken: number): Block {
  const { cache_control: mark, ...rest } = isRecord(value) ? value : { type: "text", text: value };
  const text = JSON.stringify(rest);
  const ttl = isRecord(mark) ? (mark.ttl === "1h" ? "1h" : "5m") : null;
  return { tokens: Math.max(1, Math.ceil(text.length / charsPerToken)), breakpoint: ttl, text };
}

/**
 * The request's blocks in Anthropic's order: tools, system, messages (a message's role goes with its first block),
 * each counted at `charsPerToken` characters of its JSON a token.
 */
export function blocksOf(
  request: { tools?: unknown; system?: unknown; messages?: unknown },
  charsPerToken = 4,
): Block[] {
  const out: Block[] = [];
  if (Array.isArray(request.tools)) for (const tool of request.tools) out.push(blockOf(tool, charsPerToken));
  if (typeof request.system === "string" && request.system !== "") out.push(blockOf(request.system, charsPerToken));
  if (Array.isArray(request.system)) for (const block of request.system) out.push(blockOf(block, charsPerToken));
  if (Array.isArray(request.messages)) {
    for (const message of request.messages) {
      if (!isRecord(message)) continue;
      const content = typeof message.content === "string" ? [message.content] : message.content;
      if (!Array.isArray(content)) continue;
      content.forEach((block, i) => {
        const b = blockOf(block, charsPerToken);
        out.push(i === 0 ? { ...b, text: `${String(message.role)}:${b.text}` } : b);
      });
    }
  }
  return out;
}

/** Why Anthropic would refuse the request's breakpoints, in its words; null when they are fine. */
export function breakpointProblem(blocks: readonly Block[]): string | null {
  const found = blocks.filter((b) => b.breakpoint !== null).length;
  if (found > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${found}.`;
  return null;
}

export class AnthropicPromptCache {
  /** Prefix hash → when it expires, and its lifetime. */
  private readonly entries = new Map<string, { expiresAt: number; ttl: "5m" | "1h" }>();

  private readonly options: { minTokens: number; now?: () => number };

  constructor(options: { minTokens: number; now?: () => number }) {
    this.options = options;
  }

  /** The usage of a request of `totalInputTokens`, reading and writing the cache as Anthropic would. */
  use(model: string, blocks: readonly Block[], totalInputTokens: number): CacheUsage {
    const now = this.options.now?.() ?? Date.now();
    // The hash and the token count of every prefix, cumulative.
    const hashes: string[] = [];
    const tokens: number[] = [];
    const hash = createHash("sha256").update(model);
    let sum = 0;
    for (const block of blocks) {
      hash.update("\u0000").update(block.text);
      hashes.push(hash.copy().digest("hex"));
      sum += block.tokens;
      tokens.push(sum);
    }
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let readEnd = -1;
    for (const at of breakpoints) {
      for (let i = at; i >= Math.max(0, at - LOOKBACK_BLOCKS); i--) {
        const entry = this.entries.get(hashes[i] ?? "");
        if (entry && entry.expiresAt > now) {
          if (i > readEnd) readEnd = i;
          break;
        }
      }
    }
    const read = readEnd >= 0 ? (tokens[readEnd] ?? 0) : 0;
    if (readEnd >= 0) {
      const entry = this.entries.get(hashes[readEnd] ?? "");
      if (entry) entry.expiresAt = now + TTL_MS[entry.ttl];
    }
    const written = { "5m": 0, "1h": 0 };
    let writtenEnd = readEnd;
    for (const at of breakpoints) {
      const ttl = blocks[at]?.breakpoint ?? "5m";
      const length = tokens[at] ?? 0;
      if (length < this.options.minTokens) continue;
      const key = hashes[at] ?? "";
      const entry = this.entries.get(key);
      this.entries.set(key, { expiresAt: now + TTL_MS[ttl], ttl });
      if (at <= writtenEnd || (entry && entry.expiresAt > now)) continue;
      // The tokens between the end of what was read (or written before) and this breakpoint are newly written.
      written[ttl] += length - (tokens[writtenEnd] ?? 0);
      writtenEnd = at;
    }
    const creation = written["5m"] + written["1h"];
    const total = Math.max(totalInputTokens, tokens[tokens.length - 1] ?? 0);
    return {
      input_tokens: Math.max(0, total - read - creation),
      cache_creation_input_tokens: creation,
      cache_read_input_tokens: read,
      cache_creation: { ephemeral_5m_input_tokens: written["5m"], ephemeral_1h_input_tokens: written["1h"] },
    };
  }
}

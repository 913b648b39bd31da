// Prompt caching on an Anthropic route: `cache_control` breakpoints on a Messages request, placed as Anthropic
// documents them (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching). The cache is a prefix in
// the order Anthropic reads a request (tools, then system, then messages); a breakpoint on a block caches the prefix
// that ends there, and a later request reads the longest cached prefix it shares (Anthropic also looks back up to
// 20 blocks before each breakpoint). At most four breakpoints, so:
//   1. the last tool definition (every tool is in the prefix);
//   2. the system prompt, sent as one text block;
//   3. the last message of the previous turn (the next turn's requests share everything up to it);
//   4. the last message of the request (the turn's latest stable point: the next step of the turn sends it again,
//      followed by the answer and the tool results).
import type { MessageParam, MessagesRequest } from "../wire/anthropic";

/** How long Anthropic keeps an entry: 5 minutes (the default, not sent) or 1 hour (`ttl: "1h"`). */
export type CacheTtl = "5m" | "1h";

/** Anthropic's limit on the blocks that carry `cache_control` in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

type CacheControl = { type: "ephemeral"; ttl?: "1h" };

/** The request with its breakpoints; a request that already carries `cache_control` (the client's own) is left as it is. */
export function withCacheBreakpoints(request: MessagesRequest, ttl: CacheTtl = "5m"): MessagesRequest {
  if (hasBreakpoint(request)) return request;
  const mark: CacheControl = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const out: MessagesRequest = { ...request };
  const tools = request.tools;
  if (tools && tools.length > 0) {
    out.tools = tools.map((tool, i) => (i === tools.length - 1 ? { ...tool, cache_control: mark } : tool));
  }
  const system = typeof request.system === "string" ? request.system : null;
  if (system) out.system = [{ type: "text", text: system, cache_control: mark }];
  const messages = [...request.messages];
  for (const index of new Set([previousTurnEnd(messages), messages.length - 1])) {
    if (index < 0) continue;
    const message = messages[index];
    const marked = message ? markedMessage(message, mark) : null;
    if (marked) messages[index] = marked;
  }
  out.messages = messages;
  return out;
}

/** Whether a tool, a system block or a message's block already carries `cache_control`. */
function hasBreakpoint(request: MessagesRequest): boolean {
  const marked = (block: { cache_control?: unknown }) => block.cache_control != null;
  return (
    (request.tools ?? []).some(marked) ||
    (Array.isArray(request.system) && request.system.some(marked)) ||
    request.messages.some(
      (m) => Array.isArray(m.content) && m.content.some((b) => "cache_control" in b && b.cache_control != null),
    )
  );
}

/** The index of the last message before the current turn's opening user message; -1 when there is none. */
function previousTurnEnd(messages: readonly MessageParam[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "user" && !onlyToolResults(message)) return i - 1;
  }
  return -1;
}

/** A user message that only carries tool results is a step of the turn, not a new turn. */
function onlyToolResults(message: MessageParam): boolean {
  return (
    Array.isArray(message.content) &&
    message.content.length > 0 &&
    message.content.every((block) => block.type === "tool_result")
  );
}

/**
 * The message with its last block marked; null when it has no block that may carry a breakpoint (Anthropic refuses
 * one on an empty text block, and thinking blocks cannot carry one).
 */
function markedMessage(message: MessageParam, mark: CacheControl): MessageParam | null {
  if (typeof message.content === "string") {
    return message.content === ""
      ? null
      : { ...message, content: [{ type: "text", text: message.content, cache_control: mark }] };
  }
  const blocks = [...message.content];
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i];
    if (!block || block.type === "thinking" || block.type === "redacted_thinking") continue;
    if (block.type === "text" && "text" in block && block.text === "") continue;
    blocks[i] = { ...block, cache_control: mark };
    return { ...message, content: blocks };
  }
  return null;
}

// What a session's loop reads before its first model call: the mode and the base prompt (the model comes from
// the mode's route: src/routing).
import type { Db } from "../db";
import { IsolateCache } from "../isolate-cache";
import type { AgentMode } from "../modes/agent-mode";
import { modeStatement, parseModeRow } from "../modes/catalog-service";
import {
  DEFAULT_SYSTEM_PROMPT_ID,
  getSystemPrompt,
  parseSystemPromptRow,
  systemPromptStatement,
} from "../prompts/system-prompt-store";

const FALLBACK_BASE_PROMPT = "You are Aptix, a helpful AI agent.";

/** The seeded `default` system prompt from D1 (a fallback sentence if it was removed). */
export async function sessionBasePrompt(db: Db): Promise<string> {
  return (await getSystemPrompt(db, DEFAULT_SYSTEM_PROMPT_ID))?.content ?? FALLBACK_BASE_PROMPT;
}

/** What a turn's first model call reads from D1: the mode and the base prompt. */
export interface TurnReads {
  mode: AgentMode;
  basePrompt: string;
}

/**
 * The mode `key` as `org` sees it (null when there is none) and the base prompt, in one round trip to D1: the
 * Worker reads them while it checks the request, and the session's turn starts from them instead of reading them again.
 */
export async function readTurnReads(
  db: Db,
  org: string,
  key: string,
): Promise<{ mode: AgentMode | null; basePrompt: string }> {
  const [modes, prompts] = await db.batch<Record<string, unknown>>([
    modeStatement(db, org, key),
    systemPromptStatement(db, DEFAULT_SYSTEM_PROMPT_ID),
  ]);
  const modeRow = modes?.results[0];
  const promptRow = prompts?.results[0];
  return {
    mode: modeRow ? parseModeRow(modeRow) : null,
    basePrompt: promptRow ? parseSystemPromptRow(promptRow).content : FALLBACK_BASE_PROMPT,
  };
}

// The turn reads of each mode found, by org and key, kept per isolate for MODES_CACHE_MS. A mode that is not found
// is not kept, so a mode added in another isolate is found at once.
const copies = new IsolateCache<{ mode: AgentMode | null; basePrompt: string }>();

/**
 * `readTurnReads`, from this isolate's copy when it is younger than `ttlMs` (0: always read), as the model
 * routes are: a message does not pay a D1 round trip to learn its mode. An admin write in the isolate forgets
 * the copy at once; other isolates see it within `ttlMs`.
 */
export function cachedTurnReads(
  binding: D1Database,
  db: Db,
  org: string,
  key: string,
  ttlMs: number,
  now: number = Date.now(),
): Promise<{ mode: AgentMode | null; basePrompt: string }> {
  return copies.get(binding, `${org}\u0000${key}`, ttlMs, () => readTurnReads(db, org, key), {
    keep: (reads) => reads.mode !== null,
    now,
  });
}

/** Drops the isolate's copies (after an admin write to the catalog), so the next message reads D1. */
export function forgetTurnReads(binding: D1Database): void {
  copies.forget(binding);
}

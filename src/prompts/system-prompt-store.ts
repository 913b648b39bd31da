// The base system prompts in D1 (`system_prompts`), read by id.

import { z } from "zod";
import type { Db } from "../db";

export interface SystemPrompt {
  id: string;
  name: string;
  content: string;
}

const SystemPromptRow = z.object({ id: z.string(), name: z.string(), content: z.string().min(1) });

export const DEFAULT_SYSTEM_PROMPT_ID = "default";

/** The query for one prompt, to run alone or in a batch with others (one round trip). */
export function systemPromptStatement(db: Db, id: string): D1PreparedStatement {
  return db.prepare("SELECT id, name, content FROM system_prompts WHERE id = ?").bind(id);
}

export function parseSystemPromptRow(row: unknown): SystemPrompt {
  return SystemPromptRow.parse(row);
}

export async function getSystemPrompt(db: Db, id: string): Promise<SystemPrompt | null> {
  const row = await systemPromptStatement(db, id).first();
  return row ? parseSystemPromptRow(row) : null;
}

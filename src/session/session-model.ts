// The model and base prompt a session's loop uses: the configured OpenAI-compatible upstream, or the offline
// demo model when LLM_BASE_URL is empty (what `npm start` runs).
import type { ChatModel } from "../llm/chat-model";
import { DemoChatModel } from "../llm/demo-model";
import { OpenAIChatModel } from "../llm/openai-chat-model";
import { DEFAULT_SYSTEM_PROMPT_ID, getSystemPrompt } from "../prompts/system-prompt-store";
import type { Settings } from "../settings";

const FALLBACK_BASE_PROMPT = "You are Aptix, a helpful AI agent.";

export function sessionChatModel(llm: Settings["llm"]): ChatModel {
  if (!llm.baseUrl) return new DemoChatModel();
  return new OpenAIChatModel({
    baseUrl: llm.baseUrl,
    apiKey: llm.apiKey,
    model: llm.model,
    callTimeoutMs: llm.callTimeoutMs,
  });
}

/** The seeded `default` system prompt from D1 (a fallback sentence if it was removed). */
export async function sessionBasePrompt(db: D1Database): Promise<string> {
  return (await getSystemPrompt(db, DEFAULT_SYSTEM_PROMPT_ID))?.content ?? FALLBACK_BASE_PROMPT;
}

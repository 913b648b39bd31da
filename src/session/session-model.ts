// The model and base prompt a session's loop uses: the configured OpenAI-compatible upstream, or the offline
// demo model when LLM_BASE_URL is empty (what `npm start` runs).
import { agentConfigFromEnv } from "../agent/agent-config";
import type { ChatModel } from "../llm/chat-model";
import { DemoChatModel } from "../llm/demo-model";
import { OpenAIChatModel } from "../llm/openai-chat-model";
import { DEFAULT_SYSTEM_PROMPT_ID, getSystemPrompt } from "../prompts/system-prompt-store";

const FALLBACK_BASE_PROMPT = "You are Aptix, a helpful AI agent.";

export function sessionChatModel(env: Cloudflare.Env): ChatModel {
  if (!env.LLM_BASE_URL) return new DemoChatModel();
  return new OpenAIChatModel({
    baseUrl: env.LLM_BASE_URL,
    apiKey: env.LLM_API_KEY ?? "",
    model: env.LLM_MODEL,
    callTimeoutMs: agentConfigFromEnv(env).modelCallTimeoutMs,
  });
}

/** The seeded `default` system prompt from D1 (a fallback sentence if it was removed). */
export async function sessionBasePrompt(db: D1Database): Promise<string> {
  return (await getSystemPrompt(db, DEFAULT_SYSTEM_PROMPT_ID))?.content ?? FALLBACK_BASE_PROMPT;
}

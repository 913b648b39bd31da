// The agent through the Vercel AI SDK (`ai` with `@ai-sdk/openai-compatible`): the agent's door is an
// OpenAI-compatible provider like any other.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText } from "ai";
import type { Aptix } from "./aptix.ts";

export async function main({ url, key, fetch }: Aptix): Promise<string> {
  const aptix = createOpenAICompatible({ name: "aptix", baseURL: `${url}/agent/v1`, apiKey: key, fetch });
  const { text } = await generateText({ model: aptix.chatModel("aptix-agent/general"), prompt: "say hello to Ada" });
  return text;
}

// The agent through the official `@anthropic-ai/sdk`: the same agent on Anthropic's Messages wire (base URL
// <aptix>/agent, so the SDK posts to /agent/v1/messages).
import Anthropic from "@anthropic-ai/sdk";
import type { Aptix } from "./aptix.ts";

export async function main({ url, key, fetch }: Aptix): Promise<string> {
  const client = new Anthropic({ baseURL: `${url}/agent`, apiKey: key, fetch });
  const message = await client.messages.create({
    model: "aptix-agent/general",
    max_tokens: 1024,
    messages: [{ role: "user", content: "say hello to Ada" }],
  });
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

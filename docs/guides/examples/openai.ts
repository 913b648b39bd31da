// The agent through the official `openai` client: the agent's door speaks OpenAI chat completions, and a mode is a
// model, `aptix-agent/<mode key>`. The agent runs its own tools in its session and answers with the result.
import OpenAI from "openai";
import type { Aptix } from "./aptix.ts";

export async function main({ url, key, fetch }: Aptix): Promise<string> {
  const client = new OpenAI({ baseURL: `${url}/agent/v1`, apiKey: key, fetch });
  const answer = await client.chat.completions.create({
    model: "aptix-agent/general",
    messages: [{ role: "user", content: "say hello to Ada" }],
  });
  return answer.choices[0]?.message.content ?? "";
}

// The fixed prompt of a compaction: the mode's model is asked to fold the conversation's older turns (and the summary
// it was given before) into one summary the agent is sent in their place, within the summary's budget (its words
// here; its tokens are the call's max_tokens). The demo model knows it by its first line.
import type { ChatMessage } from "../wire/openai";

/** The words a summary is asked for when no budget says otherwise. */
export const SUMMARY_WORDS = 300;

/** The instructions, asking for at most `words` words. */
export function compactionInstructions(words: number = SUMMARY_WORDS): string {
  return `You summarise the earlier part of a conversation between a user and an AI agent, so that the agent can carry on the conversation with your summary in place of those messages.

Write what the agent needs to go on: what the user wants and asked for, decisions made and their reasons, facts, names, numbers, files, paths and artifacts mentioned, what tools were used and what they found or changed, and what was left open or about to happen next. If you are given a summary so far, fold it in: your summary replaces it. Leave out greetings and repetition. Do not invent anything that is not in the conversation.

Answer with the summary only, in plain sentences or short bullet points, in at most ${words} words.`;
}

export const COMPACTION_INSTRUCTIONS = compactionInstructions();

/** How the summary so far and the messages to fold in are introduced in the request. */
export const SUMMARY_SO_FAR_HEADING = "Summary so far:";
export const MESSAGES_HEADING = "Messages to summarise:";

/** The words a summary of `tokens` tokens may hold (about 0.6 of a word a token, leaving room), at most 600. */
export function summaryWords(tokens: number): number {
  return Math.max(20, Math.min(600, Math.floor(tokens * 0.6)));
}

/** The request of a compaction: the instructions, then the summary so far (if any) and the transcript. */
export function compactionRequest(
  summarySoFar: string | null,
  transcript: string,
  words: number = SUMMARY_WORDS,
): ChatMessage[] {
  const parts = summarySoFar ? [`${SUMMARY_SO_FAR_HEADING}\n${summarySoFar}`, ""] : [];
  parts.push(`${MESSAGES_HEADING}\n${transcript}`);
  return [
    { role: "system", content: compactionInstructions(words) },
    { role: "user", content: parts.join("\n") },
  ];
}

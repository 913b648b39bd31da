// What an A2A message says to the agent: its text (the text parts, joined), a client's results when a data part
// carries them, and the skill (mode) it asks for. Anything else it carries is refused, naming the part.
import type { Message, SendMessageRequest } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";
import { z } from "zod";
import { ClientToolResults } from "../wire/session";
import { fieldMessage, firstProblem } from "../zod-issues";

/** The text of a message, and a client's results when it carries them (a data part `{"results": [...]}`). */
export interface MessageInput {
  message: Message;
  text: string;
  results: z.output<typeof ClientToolResults> | null;
}

const ResultsPart = z.object({ results: ClientToolResults });

export function readInput(params: SendMessageRequest): MessageInput {
  const message = params.message;
  if (!message) throw new RequestMalformedError("message is required.");
  if (!message.messageId) throw new RequestMalformedError("message.messageId is required.");
  if (message.parts.length === 0) throw new RequestMalformedError("message.parts must have at least one part.");
  const texts: string[] = [];
  let results: MessageInput["results"] = null;
  for (const [index, part] of message.parts.entries()) {
    const content = part.content;
    if (content?.$case === "text") texts.push(content.value);
    else if (content?.$case === "data") {
      const parsed = ResultsPart.safeParse(content.value);
      if (!parsed.success) {
        const where = `data part message.parts[${index}] (a client's results: {"results":[...]})`;
        throw new RequestMalformedError(fieldMessage(firstProblem(parsed.error), where));
      }
      results = parsed.data.results;
    } else {
      throw new ContentTypeNotSupportedError(
        `message.parts[${index}]: this agent takes text parts (and a data part with a client's results), not files.`,
      );
    }
  }
  const text = texts.join("\n").trim();
  if (!text && !results) throw new RequestMalformedError("message.parts: needs a text part that is not empty.");
  return { message, text, results };
}

/** The skill (mode) a message asks for: metadata `skillId` (or `mode`) of the request, else of the message. */
export function askedSkill(params: SendMessageRequest, message: Message): string | null {
  for (const metadata of [params.metadata, message.metadata]) {
    for (const key of ["skillId", "mode"]) {
      const value: unknown = metadata?.[key];
      if (value === undefined) continue;
      if (typeof value !== "string" || !value) throw new RequestMalformedError(`metadata.${key} must be a skill's id.`);
      return value;
    }
  }
  return null;
}

// How a user's attached files reach the model: a text file as a fenced block under the message, named; an image as
// an OpenAI image_url part (a base64 data URL) for a route that reads images, else as a line saying it is not shown.
import { codeSpan, fenced } from "../markdown-fence";
import { estimateTokens } from "../token-estimate";
import type { StoredAttachment } from "../wire/attachments";
import type { ChatMessage, ChatUserPart } from "../wire/openai";

/** What an image is counted as in the history budget (estimated tokens): a large image's share on OpenAI's models. */
export const IMAGE_TOKENS = 1_000;

/** The text file as the model reads it: its name and type, then its text fenced. */
function textFileBlock(file: StoredAttachment): string {
  return `Attached file ${codeSpan(file.name)} (${file.mediaType}):\n${fenced(file.text ?? "")}`;
}

const imageLine = (file: StoredAttachment) => `Attached image ${codeSpan(file.name)} (${file.mediaType}):`;
const IMAGE_NOT_SHOWN = "(The image is not shown: this model does not read images.)";

/**
 * A user message's content for the model: its text with each text file under it; with images, parts (the text, then
 * each image after a line naming it). A message without files is its text as it is.
 */
export function userContent(content: string, files: readonly StoredAttachment[] = []): string | ChatUserPart[] {
  if (files.length === 0) return content;
  const texts = files.filter((f) => f.text !== undefined).map(textFileBlock);
  const text = [content, ...texts].filter(Boolean).join("\n\n");
  const images = files.filter((f) => f.text === undefined);
  if (images.length === 0) return text;
  const parts: ChatUserPart[] = text ? [{ type: "text", text }] : [];
  for (const image of images) {
    parts.push({ type: "text", text: imageLine(image) });
    if (image.data)
      parts.push({ type: "image_url", image_url: { url: `data:${image.mediaType};base64,${image.data}` } });
    else parts.push({ type: "text", text: IMAGE_NOT_SHOWN });
  }
  return parts;
}

/**
 * The messages as a route that does not read images gets them: each image part becomes a line saying it is not
 * shown, and a message left with text only is one string again. (A fallback route, or the history after a change
 * to a mode on such a route.)
 */
export function withoutImages(messages: ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    if (message.role !== "user" || typeof message.content === "string") return message;
    const text = message.content.map((part) => (part.type === "text" ? part.text : IMAGE_NOT_SHOWN)).join("\n");
    return { role: "user", content: text };
  });
}

/** The files' estimated tokens, as the history budget counts them. */
export function attachmentTokens(files: readonly StoredAttachment[] = []): number {
  let tokens = 0;
  for (const file of files) {
    tokens += file.text !== undefined ? estimateTokens(file.text) : IMAGE_TOKENS;
  }
  return tokens;
}

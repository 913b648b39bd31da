// Where the passthrough's guardrails read and write text in a client's body and in an answer, by wire and path:
// the user's texts of a request (`input`), the assistant's texts of a JSON answer and of a stream's events
// (`output`). A text is a slot: read it, write it back; everything around it is left as the client or the upstream
// wrote it. Nothing here decides anything: passthrough-guard.ts checks the texts these functions find.

/** One text in a parsed body: its value and how to write a new one in its place. */
export interface TextSlot {
  text: string;
  set(text: string): void;
  /** Where the text is in its body, as an error's `param` names a field (`messages.2.content.0.text`). */
  path: string;
}

/** `key` under `base` as a field's path (`base` empty: the body itself). */
const under = (base: string, key: string | number) => (base ? `${base}.${key}` : String(key));

/** The doors whose texts are known here: chat completions and Responses on OpenAI's wire, Messages on Anthropic's. */
export type GuardedDoor = "chat" | "responses" | "messages";

/** The door of a client's path and wire, or null for a path the guardrails do not read (embeddings, completions). */
export function guardedDoor(wire: "openai" | "anthropic", path: string): GuardedDoor | null {
  if (wire === "anthropic") return path === "/messages" || path === "/messages/count_tokens" ? "messages" : null;
  if (path === "/chat/completions") return "chat";
  if (path === "/responses") return "responses";
  return null;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function slot(holder: Record<string, unknown>, key: string, base: string): TextSlot | null {
  const text = holder[key];
  if (typeof text !== "string") return null;
  return {
    text,
    set: (next) => {
      holder[key] = next;
    },
    path: under(base, key),
  };
}

/** The text parts of a content value: the string itself, or each part of `partType` in a list. */
function contentSlots(holder: Record<string, unknown>, partTypes: ReadonlySet<string>, base: string): TextSlot[] {
  const content = holder.content;
  if (typeof content === "string") return [slot(holder, "content", base)].filter((s) => s !== null);
  if (!Array.isArray(content)) return [];
  const slots: TextSlot[] = [];
  for (const [index, part] of content.entries()) {
    if (isRecord(part) && typeof part.type === "string" && partTypes.has(part.type)) {
      const found = slot(part, "text", under(under(base, "content"), index));
      if (found) slots.push(found);
    }
  }
  return slots;
}

/** The user items of `list` (at `key` of the body), each with its field's path. */
function userItems(list: unknown[], key: string): [Record<string, unknown>, string][] {
  return [...list.entries()].flatMap(([index, item]) => (isUserItem(item) ? [[item, `${key}.${index}`]] : []));
}

const CHAT_PARTS = new Set(["text"]);
const RESPONSES_INPUT_PARTS = new Set(["input_text"]);
const MESSAGES_PARTS = new Set(["text"]);

/**
 * Every user text of a request body: chat completions' and Messages' user messages (a string, or their text
 * parts), a Responses request's `input` (a string, or its user items' text). The body is changed in place by `set`.
 */
export function userTexts(door: GuardedDoor, body: Record<string, unknown>): TextSlot[] {
  if (door === "responses") {
    if (typeof body.input === "string") return [slot(body, "input", "")].filter((s) => s !== null);
    if (!Array.isArray(body.input)) return [];
    return userItems(body.input, "input").flatMap(([item, at]) => contentSlots(item, RESPONSES_INPUT_PARTS, at));
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const parts = door === "chat" ? CHAT_PARTS : MESSAGES_PARTS;
  return userItems(messages, "messages").flatMap(([message, at]) => contentSlots(message, parts, at));
}

function isUserItem(item: unknown): item is Record<string, unknown> {
  return isRecord(item) && item.role === "user" && (item.type === undefined || item.type === "message");
}

/**
 * The assistant's texts of a JSON answer, each under a channel (a choice, an output item's part, a content block):
 * chat completions' `choices[].message.content`, Responses' `output[]` messages' `output_text` parts, a Messages
 * answer's `text` blocks.
 */
export function answerTexts(door: GuardedDoor, answer: Record<string, unknown>): TextSlot[] {
  if (door === "chat") {
    const choices = Array.isArray(answer.choices) ? answer.choices : [];
    return choices.flatMap((choice, index) => {
      const message = isRecord(choice) ? choice.message : null;
      const found = isRecord(message) ? slot(message, "content", `choices.${index}.message`) : null;
      return found ? [found] : [];
    });
  }
  if (door === "responses") {
    const output = Array.isArray(answer.output) ? answer.output : [];
    return [...output.entries()].flatMap(([index, item]) =>
      isRecord(item) && item.type === "message" ? contentSlots(item, OUTPUT_TEXT, `output.${index}`) : [],
    );
  }
  return contentSlots(answer, MESSAGES_PARTS, "");
}

const OUTPUT_TEXT = new Set(["output_text"]);

/** A text delta in a stream's event, and the channel it adds to (one text a channel). */
export interface TextDelta {
  channel: string;
  text: string;
}

/**
 * The text deltas of one streamed event (its `event:` name and parsed `data`): chat chunks' `delta.content` by
 * choice, Responses' `response.output_text.delta` by output item and part, Messages' `text_delta` by block.
 */
export function deltasOf(door: GuardedDoor, data: unknown): TextDelta[] {
  if (!isRecord(data)) return [];
  if (door === "chat") {
    const choices = Array.isArray(data.choices) ? data.choices : [];
    return choices.flatMap((choice) => {
      if (!isRecord(choice) || !isRecord(choice.delta) || typeof choice.delta.content !== "string") return [];
      if (choice.delta.content === "") return [];
      return [{ channel: String(choice.index ?? 0), text: choice.delta.content }];
    });
  }
  if (door === "responses") {
    if (data.type !== "response.output_text.delta" || typeof data.delta !== "string") return [];
    return [{ channel: `${String(data.output_index ?? 0)}:${String(data.content_index ?? 0)}`, text: data.delta }];
  }
  if (data.type !== "content_block_delta" || !isRecord(data.delta) || data.delta.type !== "text_delta") return [];
  if (typeof data.delta.text !== "string") return [];
  return [{ channel: String(data.index ?? 0), text: data.delta.text }];
}

/**
 * `data` with its text deltas replaced: `replace` gives a channel's new text, or null to take the delta out. Null
 * when nothing is left of the event (a chunk that only carried the text taken out).
 */
export function withDeltas(
  door: GuardedDoor,
  data: Record<string, unknown>,
  replace: (channel: string) => string | null,
): Record<string, unknown> | null {
  if (door === "chat") {
    const choices = Array.isArray(data.choices) ? data.choices : [];
    let carries = data.usage !== undefined && data.usage !== null;
    const next = choices.map((choice) => {
      const content = isRecord(choice) && isRecord(choice.delta) ? choice.delta.content : undefined;
      if (!isRecord(choice) || !isRecord(choice.delta) || typeof content !== "string" || content === "") {
        carries = true;
        return choice;
      }
      const { content: _taken, ...rest } = choice.delta;
      const text = replace(String(choice.index ?? 0));
      if (text !== null || Object.keys(rest).length > 0 || (choice.finish_reason ?? null) !== null) carries = true;
      return { ...choice, delta: text === null ? rest : { ...rest, content: text } };
    });
    return carries ? { ...data, choices: next } : null;
  }
  const [delta] = deltasOf(door, data);
  if (!delta) return data;
  const text = replace(delta.channel);
  if (text === null) return null;
  if (door === "responses") return { ...data, delta: text };
  return { ...data, delta: { ...(isRecord(data.delta) ? data.delta : {}), text } };
}

/**
 * A delta event carrying `text` alone on `channel`, made from another delta event of that channel (its ids, its
 * model): what a stream sends for text it held back.
 */
export function deltaEvent(
  door: GuardedDoor,
  template: Record<string, unknown>,
  channel: string,
  text: string,
): Record<string, unknown> | null {
  if (door !== "chat") return withDeltas(door, template, () => text);
  const { usage: _usage, ...rest } = template;
  return { ...rest, choices: [{ index: Number(channel), delta: { content: text }, finish_reason: null }] };
}

/** Every string of a parsed value, rewritten by `map` (for the whole texts some events repeat, and tool calls). */
export function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, map);
  return out;
}

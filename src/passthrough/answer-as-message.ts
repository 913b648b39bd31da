// A chat completions route's answer for a client of the Messages API (issue 28): the JSON completion as a message,
// the relayed chunk stream as the Messages API's events (messages-stream.ts); an error answer is left as it is
// (anthropic-errors.ts puts it in Anthropic's shape). An answer the translation cannot read is the upstream's fault.
import { ApiError } from "../errors";
import { ChatCompletionIn, chatResponseToMessage } from "../translate/anthropic-to-chat";
import { messageEventStream } from "./messages-stream";
import type { PassthroughRequest } from "./request-body";

/** An upstream answer the translation cannot read: the upstream's fault, answered 502 with the route's headers. */
export function unreadable(answer: Response, what: string, wire: string): ApiError {
  const headers: Record<string, string> = {};
  for (const name of ["x-aptix-route", "x-aptix-route-failed"]) {
    const value = answer.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const route = headers["x-aptix-route"];
  return new ApiError(
    "upstream_invalid_answer",
    `The upstream LLM's answer could not be translated to ${wire}${route ? ` (model route '${route}')` : ""}: ${what}`,
    { headers },
  );
}

export function isEventStream(response: Response): boolean {
  return response.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
}

const MESSAGES_API = "the Messages API";

/** A chat completions answer (JSON or the relayed stream) as the Messages API's; `model` is the client's. */
export async function chatAnswerAsMessage(answer: Response, request: PassthroughRequest): Promise<Response> {
  if (!answer.ok) return answer;
  const headers = new Headers(answer.headers);
  if (request.stream) {
    if (!isEventStream(answer) || !answer.body) {
      await answer.body?.cancel();
      throw unreadable(answer, "it answered a stream request without an event stream.", MESSAGES_API);
    }
    return new Response(messageEventStream(answer.body, request.model), { status: 200, headers });
  }
  let value: unknown = null;
  try {
    value = await answer.json();
  } catch {
    throw unreadable(answer, "it is not JSON.", MESSAGES_API);
  }
  const completion = ChatCompletionIn.safeParse(value);
  if (!completion.success) throw unreadable(answer, "it is not a chat completion.", MESSAGES_API);
  const message = chatResponseToMessage(completion.data, request.model);
  if (!message.ok) throw unreadable(answer, `${message.param}: ${message.message}`, MESSAGES_API);
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(message.value), { status: 200, headers });
}

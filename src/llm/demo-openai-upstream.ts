// The offline demo model behind an OpenAI-compatible face: with no LLM_BASE_URL, the passthrough forwards
// here instead of the network, so `npm start` answers /v1/models and /v1/chat/completions (plain and streamed,
// tool calls included) for coding tools and the `openai` SDK. The other endpoints say the demo lacks them.
import { errorResponse } from "../errors";
import { estimateTokens } from "../token-estimate";
import {
  ChatCompletionRequest,
  type ChatContent,
  type ChatMessage,
  type ChatTool,
  type CompletionBase,
  chatCompletion,
  chunkEvent,
  DONE_EVENT,
  type OpenAIToolCall,
  type OpenAIUsage,
  textOfContent,
  usageEvent,
  userText,
} from "../wire/openai";
import { fieldMessage, firstProblem } from "../zod-issues";
import type { ChatRequest, ChatResponse } from "./chat-model";
import { sampleValue } from "./demo-arguments";
import { DemoChatModel, earlierToolCalls } from "./demo-model";

export const DEMO_MODEL_ID = "aptix-offline-demo";

function openAIError(
  code: "invalid_json" | "invalid_request" | "model_not_found" | "not_offered_by_demo",
  message: string,
  param: string | null = null,
): Response {
  return errorResponse(code, message, { param });
}

function toChatMessage(m: ChatCompletionRequest["messages"][number]): ChatMessage {
  if (m.role === "assistant") {
    const calls = m.tool_calls?.map((c) => ({
      id: c.id,
      type: "function" as const,
      function: { name: c.function.name, arguments: c.function.arguments },
    }));
    return {
      role: "assistant",
      content: m.content === undefined || m.content === null ? null : textOf(m.content),
      ...(calls ? { tool_calls: calls } : {}),
    };
  }
  if (m.role === "tool") return { role: "tool", tool_call_id: m.tool_call_id, content: textOf(m.content) };
  if (m.role === "user") return { role: "user", content: textOf(m.content) };
  return { role: "system", content: textOf(m.content) };
}

/** The demo reads a message's parts as their text, a line each. */
const textOf = (content: ChatContent | undefined) => textOfContent(content, "\n");

function toChatMessages(body: ChatCompletionRequest): ChatMessage[] {
  return body.messages.map(toChatMessage);
}

function toChatTools(body: ChatCompletionRequest): ChatTool[] | undefined {
  return body.tools?.map((t) => ({
    type: "function",
    function: {
      name: t.function.name,
      description: t.function.description ?? "",
      parameters: t.function.parameters ?? {},
    },
  }));
}

const normalise = (text: string) => text.toLowerCase().replace(/[_\-\s]+/g, " ");

/**
 * The client's own tool the demo should call, when the request makes one due: `tool_choice` names one or
 * says "required", or the user's last words name a tool or ask for one ("use the weather tool"). Null when
 * the demo should answer in words.
 */
function wantedClientTool(body: ChatCompletionRequest, userText: string): ChatTool | null {
  const tools = toChatTools(body) ?? [];
  if (tools.length === 0 || body.tool_choice === "none") return null;
  const choice = body.tool_choice;
  if (typeof choice === "object") return tools.find((t) => t.function.name === choice.function.name) ?? null;
  const said = normalise(userText);
  const named = tools.find((t) => said.includes(normalise(t.function.name)));
  if (named) return named;
  if (choice === "required" || /\b(use|call|run|invoke)\b.*\btool\b/.test(said)) return tools[0] ?? null;
  return null;
}

/** The demo's answer: its own rules first; a client tool when the request makes one due and the rules made none. */
async function demoAnswer(
  body: ChatCompletionRequest,
  request: ChatRequest,
  model: DemoChatModel,
): Promise<ChatResponse> {
  const messages = request.messages;
  const lastUser = userText([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
  const required = body.tool_choice === "required" || typeof body.tool_choice === "object";
  const afterToolResult = messages.at(-1)?.role === "tool";
  const wanted = afterToolResult && !required ? null : wantedClientTool(body, lastUser);
  const plain = body.tool_choice === "none" ? { ...request, tools: undefined } : request;
  // When a client tool is due, the demo's own words are never used: they are not streamed either.
  const answer = await model.complete(wanted ? { ...plain, onTextDelta: undefined } : plain);
  const offered = new Set((request.tools ?? []).map((t) => t.function.name));
  if (!wanted || answer.toolCalls.some((c) => offered.has(c.name))) return answer;
  return {
    content: null,
    toolCalls: [
      {
        id: `demo_call_${earlierToolCalls(messages) + 1}`,
        name: wanted.function.name,
        arguments: JSON.stringify(sampleValue(wanted.function.parameters, lastUser)),
      },
    ],
    finishReason: "tool_calls",
  };
}

/** The demo has no tokenizer: its usage is the one estimate (src/token-estimate.ts). */
function usageFor(messages: ChatMessage[], answer: string): OpenAIUsage {
  const prompt = estimateTokens(messages.reduce((n, m) => n + (m.content?.length ?? 0), 0));
  const completion = estimateTokens(answer);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

async function chatCompletions(init: RequestInit): Promise<Response> {
  let json: unknown;
  try {
    json = JSON.parse(await new Response(init.body ?? null).text());
  } catch {
    return openAIError("invalid_json", "The request body is not valid JSON.");
  }
  const parsed = ChatCompletionRequest.safeParse(json);
  if (!parsed.success) {
    const problem = firstProblem(parsed.error);
    return openAIError("invalid_request", fieldMessage(problem, "request (the offline demo model)"), problem.param);
  }
  const body = parsed.data;
  const base: CompletionBase = {
    id: `chatcmpl-demo-${crypto.randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: DEMO_MODEL_ID,
  };
  const messages = toChatMessages(body);
  const request: ChatRequest = { messages, tools: toChatTools(body), signal: init.signal ?? undefined };

  if (!body.stream) {
    const answer = await demoAnswer(body, request, new DemoChatModel(0));
    const toolCalls = answer.toolCalls.map(
      (c): OpenAIToolCall => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      }),
    );
    return Response.json(
      chatCompletion(base, {
        content: answer.content,
        toolCalls,
        finish: answer.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
        usage: usageFor(messages, answer.content ?? JSON.stringify(toolCalls)),
      }),
    );
  }

  const encoder = new TextEncoder();
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    encoder.encode(chunkEvent(base, delta, finish));
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        controller.enqueue(chunk({ role: "assistant", content: "" }));
        const answer = await demoAnswer(
          body,
          { ...request, onTextDelta: (text) => controller.enqueue(chunk({ content: text })) },
          new DemoChatModel(),
        );
        answer.toolCalls.forEach((call, index) => {
          controller.enqueue(
            chunk({
              tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
            }),
          );
          // Arguments arrive in fragments, as real models send them.
          for (const piece of call.arguments.match(/[\s\S]{1,16}/g) ?? []) {
            controller.enqueue(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
          }
        });
        controller.enqueue(chunk({}, answer.finishReason));
        if (body.stream_options?.include_usage) {
          const usage = usageFor(messages, answer.content ?? JSON.stringify(answer.toolCalls));
          controller.enqueue(encoder.encode(usageEvent(base, usage)));
        }
        controller.enqueue(encoder.encode(DONE_EVENT));
        controller.close();
      } catch (error) {
        controller.error(error);
      }
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8" } });
}

/** A `fetch` for the upstream paths under /v1 (`/models`, `/chat/completions`, ...), answered by the demo. */
export async function demoOpenAIFetch(path: string, init: RequestInit): Promise<Response> {
  const model = { id: DEMO_MODEL_ID, object: "model", created: 0, owned_by: "aptix" };
  if (path === "/models" && (init.method ?? "GET") === "GET") return Response.json({ object: "list", data: [model] });
  if (path.startsWith("/models/") && (init.method ?? "GET") === "GET") {
    if (decodeURIComponent(path.slice("/models/".length)) === DEMO_MODEL_ID) return Response.json(model);
    return openAIError(
      "model_not_found",
      `The model does not exist; the offline demo offers only '${DEMO_MODEL_ID}'.`,
      "model",
    );
  }
  if (path === "/chat/completions" && init.method === "POST") return chatCompletions(init);
  return openAIError(
    "not_offered_by_demo",
    `The offline demo model does not offer ${path}; set LLM_BASE_URL to a real OpenAI-compatible upstream.`,
  );
}

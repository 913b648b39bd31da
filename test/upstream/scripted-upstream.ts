// A scripted OpenAI-compatible server (Node): answers each request from the script whose marker the
// request body carries, and records every request it was sent. The one stand-in in the tests. A chat request with no
// marker (a health check's) is answered as a provider would: by the model it names, or 404 model_not_found.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { OpenAIPromptCache, promptTextOf, promptTokensOf } from "./openai-prompt-cache.ts";
import {
  type CreatedScript,
  estimateTokens,
  openAIContextLengthExceeded,
  openAIModelNotFound,
  openAIUnsupportedMaxTokens,
  type RecordedRequest,
  SCRIPT_MARKER_PATTERN,
  type ScriptedToolCall,
  type ScriptedUsage,
  type ScriptOptions,
  type ScriptStep,
  scriptMarker,
} from "./script-types.ts";

export interface ScriptedUpstreamOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (as an OpenAI server checks its key). */
  apiKey?: string;
  port?: number;
  host?: string;
}

export interface ScriptedUpstream {
  url: string;
  createScript(steps: ScriptStep[], options?: ScriptOptions): CreatedScript;
  requests(id: string): RecordedRequest[];
  close(): Promise<void>;
}

interface Script {
  steps: ScriptStep[];
  requests: RecordedRequest[];
  options: ScriptOptions;
}

const DEFAULT_USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
/**
 * The models `/v1/models` lists. A chat request with no script marker is answered as a provider answers it: briefly
 * for a model it serves, 404 model_not_found for one it does not; the second model takes no `tools`, as Ollama
 * answers for a model without function calling; the third takes no `max_tokens`, as OpenAI's reasoning models
 * answer (they take `max_completion_tokens` only).
 */
export const SERVED_MODELS = ["scripted-model", "scripted-model-no-tools", "scripted-reasoning-model"] as const;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A wall clock with sub-millisecond resolution, comparable across code in this process. */
export const now = () => performance.timeOrigin + performance.now();

function openAIError(message: string, type: string, code: string | null = null) {
  return { error: { message, type, code, param: null } };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain" : "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function toolCallsWithIds(calls: ScriptedToolCall[] | undefined, seq: number) {
  return (calls ?? []).map((call, index) => ({ ...call, id: call.id ?? `call_${seq}_${index}` }));
}

function completionJson(
  step: Extract<ScriptStep, { type: "completion" }>,
  model: string,
  seq: number,
  usage: ScriptedUsage,
) {
  const toolCalls = toolCallsWithIds(step.toolCalls, seq);
  return {
    id: step.id ?? `chatcmpl-scripted-${seq}`,
    object: "chat.completion",
    created: step.id ? 1_700_000_000 : 1_700_000_000 + seq,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: step.content ?? null,
          refusal: null,
          ...(toolCalls.length > 0
            ? {
                tool_calls: toolCalls.map((c) => ({
                  id: c.id,
                  type: "function",
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: step.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      },
    ],
    usage,
  };
}

/** The chunks an OpenAI server streams for this completion, in order. */
function completionChunks(
  step: Extract<ScriptStep, { type: "completion" }>,
  model: string,
  seq: number,
  includeUsage: boolean,
  usage: ScriptedUsage,
) {
  const size = step.chunkSize ?? 8;
  const base = {
    id: step.id ?? `chatcmpl-scripted-${seq}`,
    object: "chat.completion.chunk",
    created: step.id ? 1_700_000_000 : 1_700_000_000 + seq,
    model,
  };
  // As OpenAI does: with include_usage every chunk carries `"usage": null`, and one more chunk carries the usage.
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const out: Record<string, unknown>[] = [choice({ role: "assistant", content: "", refusal: null })];
  for (const piece of chunks(step.content ?? "", size)) out.push(choice({ content: piece }));
  const toolCalls = toolCallsWithIds(step.toolCalls, seq);
  toolCalls.forEach((call, index) => {
    out.push(
      choice({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }),
    );
    for (const piece of chunks(call.arguments, size)) {
      out.push(choice({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(choice({}, step.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop")));
  if (includeUsage) out.push({ ...base, choices: [], usage });
  return out;
}

/**
 * What OpenAI answers before any completion: a model it does not have, a parameter the model does not take, messages
 * (or messages and the answer's limit) longer than its context, counted at the script's characters a token.
 */
function providerRefusal(options: ScriptOptions, body: string): { status: number; body: unknown } | null {
  if (!options.models && options.contextTokens === undefined && !options.refuseMaxTokens) return null;
  const request = JSON.parse(body) as ChatBody & { model?: unknown };
  const model = String(request.model);
  if (options.models && !options.models.includes(model)) return { status: 404, body: openAIModelNotFound(model) };
  if (options.refuseMaxTokens && request.max_tokens !== undefined) {
    return { status: 400, body: openAIUnsupportedMaxTokens() };
  }
  if (options.contextTokens === undefined) return null;
  const tokens = estimateTokens({ messages: request.messages, tools: request.tools }, options.charsPerToken);
  const completion = request.max_completion_tokens ?? request.max_tokens;
  if (tokens > options.contextTokens) {
    return { status: 400, body: openAIContextLengthExceeded(options.contextTokens, tokens, completion) };
  }
  if (completion !== undefined && tokens + completion > options.contextTokens) {
    return { status: 400, body: openAIContextLengthExceeded(options.contextTokens, tokens, completion) };
  }
  return null;
}

/** What the server reads of a chat completions request body. */
interface ChatBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: { content?: unknown }[];
  tools?: unknown[];
  max_tokens?: number;
  max_completion_tokens?: number;
}

/** Usage as a tokenizer at `charsPerToken` counts it: the request's messages and tools, the answer's text. */
function countedUsage(request: ChatBody, answer: string, charsPerToken: number): ScriptedUsage {
  const sent =
    JSON.stringify(request.messages ?? []).length + (request.tools ? JSON.stringify(request.tools).length : 0);
  const prompt = Math.ceil(sent / charsPerToken);
  const completion = Math.ceil(answer.length / charsPerToken);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The text of a message's content: a string, or the text parts of a list. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { text?: unknown }) => (typeof part.text === "string" ? part.text : "")).join("");
}

/** The echo step's completion: the input's text, repeated and cut to max_tokens when the request names it. */
function echoed(request: ChatBody, charsPerToken: number): Extract<ScriptStep, { type: "completion" }> {
  const input = (request.messages ?? []).map((m) => textOf(m.content)).join("\n") || "echo";
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  let content = input;
  let finishReason = "stop";
  if (maxTokens !== undefined) {
    const limit = maxTokens * charsPerToken;
    content = input.repeat(Math.ceil(limit / input.length)).slice(0, limit);
    finishReason = "length";
  }
  return { type: "completion", content, finishReason, usage: countedUsage(request, content, charsPerToken) };
}

export async function startScriptedUpstream(options: ScriptedUpstreamOptions = {}): Promise<ScriptedUpstream> {
  const scripts = new Map<string, Script>();
  let seq = 0;
  // One prompt cache for the server, as OpenAI keeps one per organization: every chat request teaches it its prefixes.
  const cache = new OpenAIPromptCache();

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://upstream.local");
      const body = await readBody(req);
      const receivedAt = now();

      if (url.pathname === "/__scripts" && req.method === "POST") {
        const parsed = JSON.parse(body) as { steps: ScriptStep[] } & ScriptOptions;
        const { steps, ...scriptOptions } = parsed;
        sendJson(res, 201, createScript(steps, scriptOptions));
        return;
      }
      const control = /^\/__scripts\/([a-z0-9-]+)\/(requests|steps)$/.exec(url.pathname);
      if (control) {
        const script = scripts.get(control[1] ?? "");
        if (!script) return sendJson(res, 404, openAIError("No such script.", "not_found_error"));
        if (control[2] === "steps" && req.method === "POST") {
          script.steps.push(...(JSON.parse(body) as { steps: ScriptStep[] }).steps);
          return sendJson(res, 200, { remaining: script.steps.length });
        }
        return sendJson(res, 200, { requests: script.requests });
      }

      if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return sendJson(
          res,
          401,
          openAIError("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
        );
      }
      const modelPath = /^\/v1\/models\/(.+)$/.exec(url.pathname);
      if (modelPath && req.method === "GET") {
        const id = decodeURIComponent(modelPath[1] ?? "");
        if (id !== "scripted-model") {
          return sendJson(
            res,
            404,
            openAIError(
              `The model '${id}' does not exist or you do not have access to it.`,
              "invalid_request_error",
              "model_not_found",
            ),
          );
        }
        return sendJson(res, 200, { id, object: "model", created: 1_700_000_000, owned_by: "aptix-tests" });
      }
      if (url.pathname === "/v1/models" && req.method === "GET") {
        return sendJson(res, 200, {
          object: "list",
          data: SERVED_MODELS.map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "aptix-tests" })),
        });
      }

      // The first marker whose script this upstream has: a request may carry one script for each of two upstreams.
      const id = [...body.matchAll(SCRIPT_MARKER_PATTERN)].map((m) => m[1] ?? "").find((i) => scripts.has(i));
      const script = id ? scripts.get(id) : undefined;
      if (!script && url.pathname === "/v1/chat/completions" && req.method === "POST") {
        return unscripted(res, body);
      }
      if (!script) {
        return sendJson(res, 400, openAIError("No script marker in the request body.", "invalid_request_error"));
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers[name] = value;
      }
      const record: RecordedRequest = { method: req.method ?? "GET", path: url.pathname, headers, body, receivedAt };
      if (script.options.record !== false) script.requests.push(record);
      res.on("close", () => {
        if (!res.writableEnded) record.disconnected = true;
      });
      const refusal = providerRefusal(script.options, body);
      if (refusal) return sendJson(res, refusal.status, refusal.body);
      const step = script.options.repeat && script.steps.length === 1 ? script.steps[0] : script.steps.shift();
      if (!step) return sendJson(res, 500, openAIError("The script has no steps left.", "server_error"));
      const usage = usageFor(step, body, cache, script.options.measureUsage === true);
      await answer(step, body, usage, req, res, ++seq, script.options.charsPerToken, () => {
        record.firstByteAt ??= now();
      });
    } catch (error) {
      if (!res.headersSent)
        sendJson(res, 500, openAIError(`Scripted upstream failed: ${String(error)}`, "server_error"));
      else res.destroy();
    }
  });

  function createScript(steps: ScriptStep[], options: ScriptOptions = {}): CreatedScript {
    const id = randomUUID();
    scripts.set(id, { steps: [...steps], requests: [], options });
    return { id, marker: scriptMarker(id) };
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    createScript,
    requests: (id) => scripts.get(id)?.requests ?? [],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A completion's usage: the step's own, else measured from the request with what the prompt cache read (when the
 * script says so), else the fixed default. Every chat request is shown to the cache, whatever its usage.
 */
function usageFor(step: ScriptStep, body: string, cache: OpenAIPromptCache, measure: boolean): ScriptedUsage {
  let request: { model?: unknown; messages?: unknown; tools?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === "object" && parsed !== null) request = parsed;
  } catch {
    return DEFAULT_USAGE;
  }
  const text = Array.isArray(request.messages) ? promptTextOf(request) : "";
  const cached = text ? cache.use(String(request.model), text) : 0;
  if (step.type === "completion" && step.usage) return step.usage;
  if (!measure || !text) return DEFAULT_USAGE;
  const prompt = promptTokensOf(text);
  const completion =
    step.type === "completion"
      ? promptTokensOf(`${step.content ?? ""}${(step.toolCalls ?? []).map((c) => c.arguments).join("")}`)
      : 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

/** A chat request with no script marker (a health check's): answered by the model it names, as a provider would. */
function unscripted(res: ServerResponse, body: string) {
  let request: { model?: unknown; tools?: unknown[]; stream?: unknown; max_tokens?: unknown };
  try {
    request = JSON.parse(body) as typeof request;
  } catch {
    return sendJson(
      res,
      400,
      openAIError("We could not parse the JSON body of your request.", "invalid_request_error"),
    );
  }
  const model = typeof request.model === "string" ? request.model : "";
  if (!(SERVED_MODELS as readonly string[]).includes(model)) return sendJson(res, 404, openAIModelNotFound(model));
  if (model === "scripted-reasoning-model" && request.max_tokens !== undefined) {
    return sendJson(res, 400, openAIUnsupportedMaxTokens());
  }
  if (model === "scripted-model-no-tools" && Array.isArray(request.tools) && request.tools.length > 0) {
    return sendJson(
      res,
      400,
      openAIError(`registry.ollama.ai/library/${model}:latest does not support tools`, "api_error"),
    );
  }
  if (request.stream === true) {
    return sendJson(res, 400, openAIError("An unscripted request is answered as JSON only.", "invalid_request_error"));
  }
  sendJson(
    res,
    200,
    completionJson({ type: "completion", content: "ok", finishReason: "length" }, model, 0, DEFAULT_USAGE),
  );
}

async function answer(
  step: ScriptStep,
  body: string,
  usage: ScriptedUsage,
  req: IncomingMessage,
  res: ServerResponse,
  seq: number,
  charsPerToken: number | undefined,
  stampFirstByte: () => void,
) {
  if (step.type === "hang") {
    await new Promise<void>((resolve) => req.on("close", resolve));
    return;
  }
  if (step.delayFirstByteMs) await sleep(step.delayFirstByteMs);
  if (res.destroyed) return;
  if (step.type === "error") {
    stampFirstByte();
    return sendJson(res, step.status, step.body, step.headers);
  }
  if (step.type === "json") {
    stampFirstByte();
    return sendJson(res, step.status ?? 200, step.body, step.headers);
  }

  const request = JSON.parse(body) as ChatBody;
  const reply =
    step.type === "echo"
      ? echoed(request, charsPerToken ?? 4)
      : step.type === "completion" && charsPerToken && !step.usage
        ? { ...step, usage: countedUsage(request, step.content ?? "", charsPerToken) }
        : step;
  // An echo's or a counted answer's own usage, else the one measured before (with what the prompt cache read).
  const replyUsage = reply.type === "completion" && reply.usage ? reply.usage : usage;
  if (reply.type === "completion" && !request.stream) {
    stampFirstByte();
    return sendJson(res, 200, completionJson(reply, request.model ?? "scripted-model", seq, replyUsage));
  }

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  if (reply.type === "completion") {
    const events = completionChunks(
      reply,
      request.model ?? "scripted-model",
      seq,
      request.stream_options?.include_usage === true,
      replyUsage,
    );
    for (const event of events) {
      if (res.destroyed) return;
      stampFirstByte();
      res.write(`data: ${JSON.stringify(event)}\n\n`);
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
    }
    res.end("data: [DONE]\n\n");
    return;
  }
  for (const event of reply.events) {
    if (res.destroyed) return;
    stampFirstByte();
    res.write(`${event}\n\n`);
    if (reply.eventDelayMs) await sleep(reply.eventDelayMs);
  }
  if (reply.tail && !res.destroyed) {
    res.write(reply.tail);
    if (reply.eventDelayMs) await sleep(reply.eventDelayMs);
  }
  if (reply.end === "close") res.end();
  else if (reply.end === "destroy") res.destroy();
  else await new Promise<void>((resolve) => req.on("close", resolve));
}

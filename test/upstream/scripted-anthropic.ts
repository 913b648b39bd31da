// A scripted Anthropic Messages API server (Node), beside the scripted OpenAI one: it checks `x-api-key` and
// `anthropic-version`, validates a request's basics as Anthropic does, answers each request from the script whose
// marker the request body carries (a message as JSON or as the Messages event stream, or an error in Anthropic's
// shape) and records every request it was sent. Scripts are made the same way as the OpenAI one's: in process
// (`createScript`) or over HTTP (`POST /__scripts`, `GET /__scripts/<id>/requests`, `POST /__scripts/<id>/steps`).
// It lists its models (`GET /v1/models`), and answers a request with no marker by the model it names, as Claude would.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AnthropicPromptCache, blocksOf, breakpointProblem, type CacheUsage } from "./anthropic-prompt-cache.ts";
import {
  type AnthropicErrorType,
  type AnthropicScriptedError,
  type AnthropicScriptStep,
  anthropicContextExceeded,
  anthropicModelNotFound,
  anthropicPromptTooLong,
  type CreatedScript,
  estimateTokens,
  type RecordedRequest,
  SCRIPT_MARKER_PATTERN,
  type ScriptOptions,
  scriptMarker,
} from "./script-types.ts";
import { chunks, now, readBody, sendJson, sleep } from "./scripted-upstream.ts";

export interface ScriptedAnthropicOptions {
  /**
   * When set, requests must carry `x-api-key: <apiKey>` or `Authorization: Bearer <apiKey>` (401
   * authentication_error otherwise).
   */
  apiKey?: string;
  port?: number;
  host?: string;
  /**
   * The shortest prefix the prompt cache keeps, in tokens (default 1024, Anthropic's minimum for Claude Sonnet and
   * Opus; 2048 for Haiku): a breakpoint on a shorter prefix caches nothing, as Anthropic does.
   */
  minCacheableTokens?: number;
}

export interface ScriptedAnthropic {
  url: string;
  createScript(steps: AnthropicScriptStep[], options?: ScriptOptions): CreatedScript;
  requests(id: string): RecordedRequest[];
  close(): Promise<void>;
}

interface Script {
  steps: AnthropicScriptStep[];
  requests: RecordedRequest[];
  options: ScriptOptions;
}

type MessageStep = Extract<AnthropicScriptStep, { type: "message" }>;

/** What the server reads of a Messages request body. */
interface MessagesRequest {
  model?: unknown;
  max_tokens?: unknown;
  messages?: unknown;
  system?: unknown;
  tools?: unknown;
  stream?: unknown;
}

export function requestId(): string {
  return `req_${randomBytes(12).toString("hex")}`;
}

/** Anthropic's error body: `{"type":"error","error":{"type","message"},"request_id"}`. */
export function anthropicError(type: AnthropicErrorType, message: string, id: string = requestId()) {
  return { type: "error", error: { type, message }, request_id: id };
}

function sendError(
  res: ServerResponse,
  status: number,
  error: AnthropicScriptedError,
  headers: Record<string, string> = {},
): void {
  const id = requestId();
  sendJson(res, status, anthropicError(error.type, error.message, id), { "request-id": id, ...headers });
}

/**
 * The request's input tokens at `charsPerToken`: its system, messages and tools, without their `cache_control`
 * marks, which Anthropic does not count as input.
 */
function inputTokens(request: MessagesRequest, charsPerToken?: number): number {
  const counted = withoutCacheControl({ system: request.system, messages: request.messages, tools: request.tools });
  return estimateTokens(counted, charsPerToken);
}

/** A copy of `value` with every `cache_control` field left out. */
function withoutCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "cache_control")
      .map(([key, inner]) => [key, withoutCacheControl(inner)]),
  );
}

/** The first field the Messages API would name as wrong, as Anthropic words it; undefined when the basics hold. */
function invalidField(request: MessagesRequest, countTokens: boolean): string | undefined {
  if (request.model === undefined) return "model: Field required";
  if (typeof request.model !== "string") return "model: Input should be a valid string";
  if (!countTokens) {
    if (request.max_tokens === undefined) return "max_tokens: Field required";
    if (typeof request.max_tokens !== "number" || !Number.isInteger(request.max_tokens)) {
      return "max_tokens: Input should be a valid integer";
    }
    if (request.max_tokens < 1) return "max_tokens: Input should be greater than or equal to 1";
  }
  if (request.messages === undefined) return "messages: Field required";
  if (!Array.isArray(request.messages)) return "messages: Input should be a valid list";
  if (request.messages.length === 0) return "messages: at least one message is required";
  return undefined;
}

function blocksWithIds(step: MessageStep, seq: number) {
  return step.content.map((block, index) =>
    block.type === "tool_use" ? { ...block, id: block.id ?? `toolu_scripted_${seq}_${index}` } : block,
  );
}

/**
 * The message's usage: the script's, else input counted from the request at `charsPerToken` (of which, when the
 * request has cache_control breakpoints, what the prompt cache read and wrote) and output from the answer's text.
 */
function usageOf(
  step: MessageStep,
  request: MessagesRequest,
  cache: AnthropicPromptCache,
  charsPerToken?: number,
): AnswerUsage {
  const output = step.content.map((b) => (b.type === "text" ? b.text : JSON.stringify(b.input))).join("");
  if (step.usage) return { ...NO_CACHE, ...step.usage };
  const input = inputTokens(request, charsPerToken);
  const blocks = blocksOf(request, charsPerToken);
  const cached = blocks.some((b) => b.breakpoint !== null)
    ? cache.use(String(request.model), blocks, input)
    : { ...NO_CACHE, input_tokens: input };
  return { ...cached, output_tokens: estimateTokens(output, charsPerToken) };
}

type AnswerUsage = CacheUsage & { output_tokens: number };
const NO_CACHE: CacheUsage = {
  input_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
};

function stopReasonOf(step: MessageStep) {
  return step.stopReason ?? (step.content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
}

function messageJson(step: MessageStep, request: MessagesRequest, seq: number, usage: AnswerUsage) {
  return {
    id: step.id ?? `msg_scripted_${seq}`,
    type: "message",
    role: "assistant",
    model: request.model,
    content: blocksWithIds(step, seq),
    stop_reason: stopReasonOf(step),
    stop_sequence: step.stopSequence ?? null,
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      cache_creation: usage.cache_creation,
      output_tokens: usage.output_tokens,
      service_tier: "standard",
    },
  };
}

/** The events the Messages API streams for this message, in order, as `[event type, data]`. */
function messageEvents(
  step: MessageStep,
  request: MessagesRequest,
  seq: number,
  usage: AnswerUsage,
): [string, unknown][] {
  const message = messageJson(step, request, seq, usage);
  const size = step.chunkSize ?? 8;
  const events: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          ...message,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...message.usage, output_tokens: Math.min(1, message.usage.output_tokens) },
        },
      },
    ],
  ];
  const ping: [string, unknown] = ["ping", { type: "ping" }];
  message.content.forEach((block, index) => {
    const start = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
    events.push(["content_block_start", { type: "content_block_start", index, content_block: start }]);
    // As Anthropic does: a ping after the first block starts.
    if (index === 0) events.push(ping);
    const deltas =
      block.type === "text"
        ? chunks(block.text, size).map((text) => ({ type: "text_delta", text }))
        : ["", ...chunks(JSON.stringify(block.input), size)].map((partial_json) => ({
            type: "input_json_delta",
            partial_json,
          }));
    for (const delta of deltas) events.push(["content_block_delta", { type: "content_block_delta", index, delta }]);
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  if (message.content.length === 0) events.push(ping);
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
      usage: { output_tokens: message.usage.output_tokens },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events;
}

/**
 * The models `GET /v1/models` lists, in the Models API's shape. A Messages request with no script marker naming
 * another model is answered 404 not_found_error (`model: <id>`), as Anthropic answers an unknown model.
 */
export const SERVED_MODELS = [
  { type: "model", id: "claude-scripted", display_name: "Claude Scripted", created_at: "2026-01-01T00:00:00Z" },
] as const;

/** `GET /v1/models` (a page: `limit`, default 20, up to 1000) and `GET /v1/models/<id>`, as the Models API answers. */
function sendModels(res: ServerResponse, url: URL) {
  const one = /^\/v1\/models\/([^/]+)$/.exec(url.pathname);
  if (one) {
    const id = decodeURIComponent(one[1] ?? "");
    const model = SERVED_MODELS.find((m) => m.id === id);
    if (!model) return sendError(res, 404, anthropicModelNotFound(id));
    return sendJson(res, 200, model, { "request-id": requestId() });
  }
  const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get("limit") ?? 20) || 20));
  const data = SERVED_MODELS.slice(0, limit);
  return sendJson(
    res,
    200,
    {
      data,
      has_more: SERVED_MODELS.length > limit,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    },
    { "request-id": requestId() },
  );
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export async function startScriptedAnthropic(options: ScriptedAnthropicOptions = {}): Promise<ScriptedAnthropic> {
  const scripts = new Map<string, Script>();
  let seq = 0;
  // One cache for the server, as Anthropic keeps one per organization (and per model).
  const cache = new AnthropicPromptCache({ minTokens: options.minCacheableTokens ?? 1024 });

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://anthropic.local");
      const body = await readBody(req);
      const receivedAt = now();

      if (url.pathname === "/__scripts" && req.method === "POST") {
        const parsed = JSON.parse(body) as { steps: AnthropicScriptStep[] } & ScriptOptions;
        const { steps, ...scriptOptions } = parsed;
        sendJson(res, 201, createScript(steps, scriptOptions));
        return;
      }
      const control = /^\/__scripts\/([a-z0-9-]+)\/(requests|steps)$/.exec(url.pathname);
      if (control) {
        const script = scripts.get(control[1] ?? "");
        if (!script) return sendError(res, 404, { type: "not_found_error", message: "No such script." });
        if (control[2] === "steps" && req.method === "POST") {
          script.steps.push(...(JSON.parse(body) as { steps: AnthropicScriptStep[] }).steps);
          return sendJson(res, 200, { remaining: script.steps.length });
        }
        return sendJson(res, 200, { requests: script.requests });
      }

      const countTokens = url.pathname === "/v1/messages/count_tokens";
      const modelsApi = req.method === "GET" && /^\/v1\/models(\/[^/]+)?$/.test(url.pathname);
      if (!modelsApi && (req.method !== "POST" || (url.pathname !== "/v1/messages" && !countTokens))) {
        return sendError(res, 404, { type: "not_found_error", message: "Not Found" });
      }
      // The key in `x-api-key` (as the AI SDK sends it) or as a bearer token (as the official SDK 1.x sends it).
      const apiKey = req.headers["x-api-key"] ?? /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      if (options.apiKey && !apiKey) {
        return sendError(res, 401, { type: "authentication_error", message: "x-api-key header is required" });
      }
      if (options.apiKey && apiKey !== options.apiKey) {
        return sendError(res, 401, { type: "authentication_error", message: "invalid x-api-key" });
      }
      const version = req.headers["anthropic-version"];
      if (!version) {
        return sendError(res, 400, {
          type: "invalid_request_error",
          message: "anthropic-version: header is required",
        });
      }
      if (typeof version !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(version)) {
        return sendError(res, 400, {
          type: "invalid_request_error",
          message: `anthropic-version: "${String(version)}" is not a valid version`,
        });
      }
      if (modelsApi) return sendModels(res, url);
      let request: MessagesRequest;
      try {
        const parsed: unknown = JSON.parse(body);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
        request = parsed as MessagesRequest;
      } catch {
        return sendError(res, 400, { type: "invalid_request_error", message: "The request body is not valid JSON." });
      }
      const invalid = invalidField(request, countTokens) ?? breakpointProblem(blocksOf(request)) ?? undefined;
      if (invalid) return sendError(res, 400, { type: "invalid_request_error", message: invalid });

      // The first marker whose script this upstream has: a request may carry one script for each of two upstreams.
      const id = [...body.matchAll(SCRIPT_MARKER_PATTERN)].map((m) => m[1] ?? "").find((i) => scripts.has(i));
      const script = id ? scripts.get(id) : undefined;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers[name] = value;
      }
      const record: RecordedRequest = { method: req.method ?? "POST", path: url.pathname, headers, body, receivedAt };
      if (script && script.options.record !== false) script.requests.push(record);

      if (countTokens) {
        record.firstByteAt = now();
        const counted = inputTokens(request, script?.options.charsPerToken);
        return sendJson(res, 200, { input_tokens: counted }, { "request-id": requestId() });
      }
      if (!script && typeof request.model === "string" && !SERVED_MODELS.some((m) => m.id === request.model)) {
        return sendError(res, 404, anthropicModelNotFound(request.model));
      }
      if (!script && request.stream !== true) {
        // A request no script answers (a health check's) naming a model it serves: answered briefly, as Claude would.
        const brief: MessageStep = {
          type: "message",
          content: [{ type: "text", text: "ok" }],
          stopReason: "max_tokens",
        };
        return sendJson(res, 200, messageJson(brief, request, ++seq, usageOf(brief, request, cache)), {
          "request-id": requestId(),
        });
      }
      if (!script) {
        return sendError(res, 400, {
          type: "invalid_request_error",
          message: "No script marker in the request body.",
        });
      }
      res.on("close", () => {
        if (!res.writableEnded) record.disconnected = true;
      });
      // What Anthropic answers before any message: a model it does not have, a prompt longer than its context, a
      // prompt and max_tokens together beyond it (counted at the script's characters a token).
      const { models, contextTokens, charsPerToken } = script.options;
      if (models && !models.includes(String(request.model))) {
        return sendError(res, 404, anthropicModelNotFound(String(request.model)));
      }
      if (contextTokens !== undefined) {
        const tokens = inputTokens(request, charsPerToken);
        if (tokens > contextTokens) return sendError(res, 400, anthropicPromptTooLong(tokens, contextTokens));
        const maxTokens = Number(request.max_tokens);
        if (tokens + maxTokens > contextTokens) {
          return sendError(res, 400, anthropicContextExceeded(tokens, maxTokens, contextTokens));
        }
      }
      const step = script.options.repeat && script.steps.length === 1 ? script.steps[0] : script.steps.shift();
      if (!step) return sendError(res, 500, { type: "api_error", message: "The script has no steps left." });
      await answer(step, request, cache, req, res, ++seq, script.options.charsPerToken, () => {
        record.firstByteAt ??= now();
      });
    } catch (error) {
      if (!res.headersSent) {
        sendError(res, 500, { type: "api_error", message: `Scripted Anthropic upstream failed: ${String(error)}` });
      } else res.destroy();
    }
  });

  function createScript(steps: AnthropicScriptStep[], options: ScriptOptions = {}): CreatedScript {
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

async function answer(
  step: AnthropicScriptStep,
  request: MessagesRequest,
  cache: AnthropicPromptCache,
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
    const retryAfter: Record<string, string> =
      step.retryAfter === undefined ? {} : { "retry-after": String(step.retryAfter) };
    return sendError(res, step.status, step.error, { ...retryAfter, ...step.headers });
  }
  if (step.type === "json") {
    stampFirstByte();
    return sendJson(res, step.status ?? 200, step.body, step.headers);
  }
  if (step.type === "message" && request.stream !== true) {
    stampFirstByte();
    const usage = usageOf(step, request, cache, charsPerToken);
    return sendJson(res, 200, messageJson(step, request, seq, usage), { "request-id": requestId() });
  }

  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "request-id": requestId(),
  });
  res.flushHeaders();
  if (step.type === "message") {
    const events = messageEvents(step, request, seq, usageOf(step, request, cache, charsPerToken));
    const failure = step.streamError;
    const sent = failure ? events.slice(0, failure.afterEvents ?? events.length - 2) : events;
    for (const [event, data] of sent) {
      if (res.destroyed) return;
      stampFirstByte();
      res.write(sse(event, data));
      if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
    }
    if (failure && !res.destroyed) {
      stampFirstByte();
      res.write(sse("error", anthropicError(failure.type, failure.message)));
    }
    res.end();
    return;
  }
  for (const event of step.events) {
    if (res.destroyed) return;
    stampFirstByte();
    res.write(`${event}\n\n`);
    if (step.eventDelayMs) await sleep(step.eventDelayMs);
  }
  if (step.tail && !res.destroyed) {
    res.write(step.tail);
    if (step.eventDelayMs) await sleep(step.eventDelayMs);
  }
  if (step.end === "close") res.end();
  else if (step.end === "destroy") res.destroy();
  else await new Promise<void>((resolve) => req.on("close", resolve));
}

// The attribute names our spans carry: the OpenTelemetry GenAI and MCP semantic conventions (which moved to their
// own repository and have no npm package of their own; test/node/semconv-names.test.ts checks these
// against @opentelemetry/semantic-conventions so a rename shows), the HTTP ones, and ours under `aptix.`.
export const ATTR = {
  // GenAI (https://opentelemetry.io/docs/specs/semconv/gen-ai/)
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestStream: "gen_ai.request.stream",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  finishReasons: "gen_ai.response.finish_reasons",
  timeToFirstChunk: "gen_ai.response.time_to_first_chunk",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  /** Of the input tokens, those read from the provider's prompt cache (counted in input_tokens too). */
  cacheReadInputTokens: "gen_ai.usage.cache_read.input_tokens",
  /** Of the input tokens, those written to the provider's prompt cache (counted in input_tokens too). */
  cacheCreationInputTokens: "gen_ai.usage.cache_creation.input_tokens",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  // MCP (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/)
  mcpMethodName: "mcp.method.name",
  mcpSessionId: "mcp.session.id",
  // General
  errorType: "error.type",
  serverAddress: "server.address",
  serverPort: "server.port",
  httpMethod: "http.request.method",
  httpRoute: "http.route",
  httpStatus: "http.response.status_code",
  urlPath: "url.path",
  userId: "enduser.id",
  // Ours
  org: "aptix.org",
  keyId: "aptix.key.id",
  requestId: "aptix.request.id",
  turnId: "aptix.turn.id",
  turnOutcome: "aptix.turn.outcome",
  turnIterations: "aptix.turn.iterations",
  turnRun: "aptix.turn.run",
  modeVersion: "aptix.mode.version",
  modelRoute: "aptix.model_route",
  toolRanOn: "aptix.tool.ran_on",
  mcpServer: "aptix.mcp.server",
  upstreamStatus: "aptix.upstream.status",
  passthroughPath: "aptix.passthrough.path",
} as const;

/** The GenAI operations our spans name. */
export const OPERATION = {
  chat: "chat",
  embeddings: "embeddings",
  textCompletion: "text_completion",
  invokeAgent: "invoke_agent",
  executeTool: "execute_tool",
} as const;

/** Span events. */
export const EVENT = {
  failover: "aptix.model_route.failover",
  restart: "aptix.model.restart",
  wait: "aptix.wait",
  firstChunk: "aptix.model.first_chunk",
} as const;

/**
 * The `gen_ai.provider.name` of a route's provider: the conventions' well-known values where one applies
 * (`openai` for an OpenAI-compatible base URL, `anthropic`), a name of ours otherwise.
 */
export function providerName(provider: string): string {
  switch (provider) {
    case "openai_compatible":
    case "openai":
      return "openai";
    case "anthropic":
      return "anthropic";
    case "workers_ai":
      return "cloudflare.workers_ai";
    case "offline_demo":
      return "aptix.offline_demo";
    default:
      return provider;
  }
}

/** The prompt cache's share of a call's input tokens as span attributes (none when the provider reported none). */
export function cacheAttributes(usage: {
  cachedInputTokens?: number | undefined;
  cacheWriteInputTokens?: number | undefined;
}): Record<string, number> {
  return {
    ...(usage.cachedInputTokens !== undefined ? { [ATTR.cacheReadInputTokens]: usage.cachedInputTokens } : {}),
    ...(usage.cacheWriteInputTokens !== undefined
      ? { [ATTR.cacheCreationInputTokens]: usage.cacheWriteInputTokens }
      : {}),
  };
}

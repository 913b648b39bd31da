// The attribute names and values our spans carry (src/observability/tracing/attributes.ts) are the OpenTelemetry
// semantic conventions' own: compared with @opentelemetry/semantic-conventions, so a rename upstream fails here.
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import { ATTR, OPERATION, providerName } from "../../src/observability/tracing/attributes.ts";

/** Ours → the convention's exported constant. Names under `aptix.` are ours and have none. */
const CONVENTION: Partial<Record<keyof typeof ATTR, string>> = {
  operationName: semconv.ATTR_GEN_AI_OPERATION_NAME,
  providerName: semconv.ATTR_GEN_AI_PROVIDER_NAME,
  requestModel: semconv.ATTR_GEN_AI_REQUEST_MODEL,
  requestStream: semconv.ATTR_GEN_AI_REQUEST_STREAM,
  responseModel: semconv.ATTR_GEN_AI_RESPONSE_MODEL,
  responseId: semconv.ATTR_GEN_AI_RESPONSE_ID,
  finishReasons: semconv.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  timeToFirstChunk: semconv.ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  inputTokens: semconv.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  outputTokens: semconv.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  cacheReadInputTokens: semconv.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  cacheCreationInputTokens: semconv.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  conversationId: semconv.ATTR_GEN_AI_CONVERSATION_ID,
  agentName: semconv.ATTR_GEN_AI_AGENT_NAME,
  toolName: semconv.ATTR_GEN_AI_TOOL_NAME,
  toolCallId: semconv.ATTR_GEN_AI_TOOL_CALL_ID,
  toolType: semconv.ATTR_GEN_AI_TOOL_TYPE,
  inputMessages: semconv.ATTR_GEN_AI_INPUT_MESSAGES,
  outputMessages: semconv.ATTR_GEN_AI_OUTPUT_MESSAGES,
  toolCallArguments: semconv.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  toolCallResult: semconv.ATTR_GEN_AI_TOOL_CALL_RESULT,
  mcpMethodName: semconv.ATTR_MCP_METHOD_NAME,
  mcpSessionId: semconv.ATTR_MCP_SESSION_ID,
  errorType: semconv.ATTR_ERROR_TYPE,
  serverAddress: semconv.ATTR_SERVER_ADDRESS,
  serverPort: semconv.ATTR_SERVER_PORT,
  httpMethod: semconv.ATTR_HTTP_REQUEST_METHOD,
  httpRoute: semconv.ATTR_HTTP_ROUTE,
  httpStatus: semconv.ATTR_HTTP_RESPONSE_STATUS_CODE,
  urlPath: semconv.ATTR_URL_PATH,
  userId: semconv.ATTR_ENDUSER_ID,
};

describe("the span attributes' names", () => {
  it("are the semantic conventions' names, except ours under aptix.", () => {
    const ours = Object.entries(ATTR).filter(([, name]) => !name.startsWith("aptix."));
    expect(Object.fromEntries(ours)).toEqual(CONVENTION);
  });

  it("name the operations by the conventions' values", () => {
    expect(OPERATION).toEqual({
      chat: semconv.GEN_AI_OPERATION_NAME_VALUE_CHAT,
      embeddings: semconv.GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS,
      textCompletion: semconv.GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION,
      invokeAgent: semconv.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      executeTool: semconv.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    });
  });

  it("name the well-known providers by the conventions' values", () => {
    expect([providerName("openai_compatible"), providerName("anthropic")]).toEqual([
      semconv.GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
      semconv.GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
    ]);
  });
});

// An MCP server's tool as an AgentTool under the TUL-011 contract, made with defineTool from the tool's own
// inputSchema (arguments checked against it before the call); the call made through the session object's
// connection with the turn's signal and the server's timeout, its result read for the model (text, structured
// content, notes for binaries), every call logged.

import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { AdminLogger } from "../observability/admin-logger";
import { redactedError } from "../secret-redaction";
import { type AgentTool, exceptionTag, InvokeResult } from "../tools/contract";
import { defineTool } from "../tools/define-tool";
import { McpConfigurationError, type McpConnection } from "./mcp-connection";
import { mcpToolName } from "./mcp-names";
import { resultForModel } from "./mcp-result";

const DESCRIPTION_CHARS = 1_000;
const ERROR_TEXT_CHARS = 500;

export interface McpToolOptions {
  connection: McpConnection;
  tool: Tool;
  /** The category the enhanced prompt groups the tool under: the operator's, or the server's name. */
  category: string;
  logger: AdminLogger;
  /**
   * Takes the secrets in play out of a server's words (its error text, the SDK's message, which quotes the server's
   * answer) before they reach a log, the model or a client: a server may echo the token it was sent.
   */
  redact: (text: string) => string;
}

/** The AgentTool of one MCP tool, with which server and tool it is (for the approval dialog and the frames). */
export function mcpAgentTool(options: McpToolOptions): AgentTool {
  const { connection, tool, category, logger, redact } = options;
  const server = connection.config;
  const toolName = mcpToolName(server.name, tool.name);
  const said = (tool.description ?? tool.title ?? "").trim().slice(0, DESCRIPTION_CHARS);
  const readOnly = tool.annotations?.readOnlyHint === true;
  const label = `MCP tool '${server.name}/${tool.name}'`;

  const defined = defineTool({
    name: toolName,
    label,
    usage: `${said || `The tool '${tool.name}'.`} (From the MCP server '${server.name}': ${server.description})`,
    description: `[MCP ${server.name}] ${said || tool.name}`,
    category,
    runsOn: "server",
    needsApproval: server.approval === "always" || (server.approval === "unless_read_only" && !readOnly),
    repeatable: readOnly || tool.annotations?.idempotentHint === true,
    priority: 40,
    args: { jsonSchema: tool.inputSchema },
    blankArguments: "empty",
    logger,
    execute: async (args, context, signal) => {
      const started = Date.now();
      const log = (outcome: string) =>
        logger.addCustomEvent("Message", "[mcp_call]", outcome, [
          ["server", server.name],
          ["tool", tool.name],
          ["durationMs", String(Date.now() - started)],
          ["outcome", outcome],
          ["SessionId", context?.sessionId ?? ""],
        ]);
      try {
        const result = await connection.callTool(tool.name, args, {
          ...(signal ? { signal } : {}),
          timeoutMs: server.timeoutMs,
          ...(context?.elicit ? { elicit: context.elicit } : {}),
        });
        const read = resultForModel(result);
        log(read.isError ? "tool_error" : "ok");
        if (read.isError) {
          return InvokeResult.fromError(
            `${label} reported an error: ${redact(read.text).slice(0, ERROR_TEXT_CHARS) || "no details"}`,
          );
        }
        return InvokeResult.create(read.json);
      } catch (error) {
        if (signal?.aborted) {
          log("cancelled");
          return InvokeResult.fromError(`${label} was cancelled with the turn.`);
        }
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
          log("timeout");
          return InvokeResult.fromError(`${label} did not answer within ${server.timeoutMs} ms.`);
        }
        if (error instanceof McpConfigurationError) {
          log("misconfigured");
          return InvokeResult.fromError(`${label} cannot be called: ${error.message}.`);
        }
        log("failed");
        logger.addException(exceptionTag(toolName), redactedError(error, redact), [
          ["server", server.name],
          ["tool", tool.name],
        ]);
        if (error instanceof McpError)
          return InvokeResult.fromError(`${label} failed: the server refused the call (MCP error ${error.code}).`);
        return InvokeResult.fromError(`${label} failed: the MCP server could not be reached or broke off the call.`);
      }
    },
  });
  return { ...defined, mcp: { server: server.name, tool: tool.name } };
}

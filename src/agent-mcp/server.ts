// The agent as an MCP server (the MCP door, /mcp): tools to list the modes, start a session, send it a
// message, decide the approvals that wait and hand back the results of client-executed calls; and each of the
// caller's recent sessions as a resource (its transcript). Built on the official SDK's McpServer; sessions
// are the same objects as at every other door, owned by the key's org.

import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { z } from "zod";
import type { Db } from "../db";
import { D1AgentModeCatalogService, unknownModeMessage } from "../modes/catalog-service";
import type { Outcome } from "../refusal";
import { sessionNotFound } from "../refusal";
import type { Caller } from "../session/caller";
import { createSession, sessionStubOrNull } from "../session/session-client";
import { recentSessions } from "../session/session-index";
import type { SessionView } from "../wire/session";
import { type AgentExecuteResponse, PendingElicitation, TurnError } from "../wire/turn";

export const AGENT_MCP_SERVER_INFO = { name: "aptix-edge", title: "aptix agent", version: "1.0.0" } as const;

const INSTRUCTIONS =
  "An aptix agent. Start a session in a mode (list_modes shows them), send it messages with send_message, and " +
  "answer what a turn waits for: decide_approvals for calls that need a person's approval, submit_tool_results " +
  "for calls your side carries out. Each session's transcript is a resource, aptix://sessions/{sessionId}.";

const SessionId = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "a session id (64 hex digits)")
  .describe("The session's id.");

const PendingCall = z.object({
  toolCallId: z.string(),
  name: z.string(),
  argumentsJson: z.string(),
  /** For a call your side carries out: the request its server-side check prepared. */
  request: z.string().nullable(),
});

/** What a turn ended with, for the model on the other side: the answer, and what waits for it. */
const TurnResult = z.object({
  sessionId: z.string(),
  status: z.string(),
  mode: z.string(),
  text: z.string(),
  awaitingApproval: z.array(PendingCall),
  awaitingResults: z.array(PendingCall),
  /** The question an MCP server of the mode asks the user (status `awaiting_input`), answered over /context. */
  awaitingAnswer: PendingElicitation.optional(),
  /** Why the turn failed; a rate limit says how long the model service asked us to wait (`retryAfterSeconds`). */
  error: TurnError.optional(),
});
type TurnResult = z.infer<typeof TurnResult>;

function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

function turnResult(response: AgentExecuteResponse): CallToolResult {
  const pending = (approval: boolean) =>
    response.toolCalls
      .filter((c) => (approval ? c.approval === "pending" : c.requiresClientExecution && c.approval !== "pending"))
      .filter((c) =>
        approval ? true : response.status === "awaiting_client" && c.wasExecuted && c.errorMessage === null,
      )
      .map((c) => ({
        toolCallId: c.id,
        name: c.name,
        argumentsJson: c.argumentsJson,
        request: approval ? null : c.resultJson,
      }));
  const result: TurnResult = {
    sessionId: response.sessionId,
    status: response.status,
    mode: response.mode,
    text: response.text,
    awaitingApproval: response.status === "awaiting_approval" ? pending(true) : [],
    awaitingResults: response.status === "awaiting_client" ? pending(false) : [],
    ...(response.elicitation ? { awaitingAnswer: response.elicitation } : {}),
    ...(response.error ? { error: response.error } : {}),
  };
  const lines = [result.text || `(${result.status})`];
  for (const call of result.awaitingApproval) {
    lines.push(
      `Waiting for approval: ${call.toolCallId} ${call.name} ${call.argumentsJson} (answer with decide_approvals)`,
    );
  }
  for (const call of result.awaitingResults) {
    lines.push(
      `Waiting for your result: ${call.toolCallId} ${call.name} ${call.request ?? ""} (answer with submit_tool_results)`,
    );
  }
  if (result.awaitingAnswer) {
    const { elicitationId, server, message } = result.awaitingAnswer;
    lines.push(
      `Waiting for the user's answer to MCP server ${server}: ${message} (answer with POST /context/sessions/${result.sessionId}/elicitations/${elicitationId})`,
    );
  }
  if (result.error) {
    const wait = result.error.retryAfterSeconds;
    const retry = wait === undefined ? "" : ` (retry after ${wait} s)`;
    lines.push(`The turn ${result.status}: ${result.error.code}: ${result.error.message}${retry}`);
  }
  const failed = result.status === "failed" || result.status === "cancelled";
  return {
    content: [{ type: "text", text: lines.join("\n") }],
    structuredContent: result,
    ...(failed ? { isError: true } : {}),
  };
}

function answered<T>(outcome: Outcome<T>, then: (value: T) => CallToolResult): CallToolResult {
  return outcome.ok ? then(outcome.value) : failure(`${outcome.code}: ${outcome.message}`);
}

function transcript(view: SessionView): string {
  const lines = [
    `# Session ${view.sessionId}`,
    "",
    `Mode: ${view.mode} · Status: ${view.status} · Started ${view.createdAt}`,
  ];
  if (view.hasMoreMessages) {
    lines.push(
      "",
      `(The newest messages only: older ones from GET /context/sessions/${view.sessionId}/messages?before=${view.oldestSeq}.)`,
    );
  }
  for (const message of view.conversation) {
    if (message.role === "tool" || message.kind === "correction") continue;
    const who = message.role === "user" ? (message.kind === "workflow" ? "Workflow" : "You") : "Agent";
    const calls = (message.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`);
    const text = [message.content ?? "", calls.length > 0 ? `[called ${calls.join(", ")}]` : ""]
      .filter(Boolean)
      .join(" ");
    if (text) lines.push("", `**${who}:** ${text}`);
  }
  return lines.join("\n");
}

/**
 * The MCP server of one request, acting for `caller`: it reads through the request's `db` session and
 * places the sessions it starts by `locationHint`.
 */
export function agentMcpServer(
  env: Cloudflare.Env,
  caller: Caller,
  where: { db: Db; locationHint?: DurableObjectLocationHint },
): McpServer {
  const { db } = where;
  const server = new McpServer(AGENT_MCP_SERVER_INFO, {
    instructions: INSTRUCTIONS,
    // Workers forbid the code generation of the SDK's default validator (ajv).
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  const catalog = new D1AgentModeCatalogService(db, caller.org);
  const stub = (sessionId: string) => sessionStubOrNull(env, sessionId);

  server.registerTool(
    "list_modes",
    {
      title: "List modes",
      description: "The agent's modes: what each is for. A session works in one mode at a time.",
      inputSchema: {},
      outputSchema: {
        modes: z.array(
          z.object({ key: z.string(), displayName: z.string(), description: z.string(), isDefault: z.boolean() }),
        ),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      const modes = (await catalog.getAllModes()).map((m) => ({
        key: m.key,
        displayName: m.displayName,
        description: m.description,
        isDefault: m.isDefault,
      }));
      const text = modes
        .map((m) => `- ${m.key}${m.isDefault ? " (default)" : ""}: ${m.displayName}. ${m.description}`)
        .join("\n");
      return { content: [{ type: "text", text }], structuredContent: { modes } };
    },
  );

  server.registerTool(
    "start_session",
    {
      title: "Start a session",
      description: "Starts an agent session in a mode (the default mode without one); answers its id.",
      inputSchema: { mode: z.string().optional().describe("The mode's key (see list_modes).") },
      outputSchema: { sessionId: z.string(), mode: z.string(), status: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ mode }) => {
      const found = mode ? await catalog.getMode(mode) : await catalog.getDefaultMode();
      if (!found) return failure(await unknownModeMessage(catalog, mode ?? ""));
      const session = await createSession(env, caller, found.key, where.locationHint);
      const result = { sessionId: session.sessionId, mode: session.mode, status: session.status };
      return {
        content: [{ type: "text", text: `Session ${result.sessionId} started in the ${result.mode} mode.` }],
        structuredContent: result,
      };
    },
  );

  server.registerTool(
    "send_message",
    {
      title: "Send a message",
      description:
        "Sends a message to a session: the agent runs one turn (calling its tools) and answers. The answer says " +
        "what waits: calls to approve (decide_approvals) or calls your side carries out (submit_tool_results).",
      inputSchema: { sessionId: SessionId, content: z.string().min(1).max(100_000).describe("The message.") },
      outputSchema: TurnResult.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ sessionId, content }) => {
      const session = stub(sessionId);
      if (!session) return failure(sessionNotFound(sessionId).message);
      return answered(await session.sendMessage(caller, content), turnResult);
    },
  );

  server.registerTool(
    "decide_approvals",
    {
      title: "Decide approvals",
      description: "Approves or denies the calls a session's turn waits to have approved; the turn goes on.",
      inputSchema: {
        sessionId: SessionId,
        decisions: z
          .array(
            z.object({
              toolCallId: z.string().min(1),
              approved: z.boolean(),
              reason: z.string().max(2_000).optional().describe("Why, for a denial; the agent is told."),
            }),
          )
          .min(1),
      },
      outputSchema: TurnResult.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ sessionId, decisions }) => {
      const session = stub(sessionId);
      if (!session) return failure(sessionNotFound(sessionId).message);
      return answered(await session.submitApprovals(caller, decisions), turnResult);
    },
  );

  server.registerTool(
    "submit_tool_results",
    {
      title: "Submit tool results",
      description:
        "The results of calls a session's turn handed to your side (a JSON result, or why it could not run); the turn goes on.",
      inputSchema: {
        sessionId: SessionId,
        results: z
          .array(
            z.object({
              toolCallId: z.string().min(1),
              resultJson: z.string().max(10_485_760).optional().describe("The result, as JSON text."),
              errorMessage: z.string().min(1).max(10_000).optional().describe("Why the call could not be carried out."),
            }),
          )
          .min(1),
      },
      outputSchema: TurnResult.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ sessionId, results }) => {
      const session = stub(sessionId);
      if (!session) return failure(sessionNotFound(sessionId).message);
      const bad = results.find((r) => (r.resultJson === undefined) === (r.errorMessage === undefined));
      if (bad) return failure(`Result for ${bad.toolCallId} needs exactly one of resultJson and errorMessage.`);
      return answered(await session.submitToolResults(caller, results), turnResult);
    },
  );

  server.registerResource(
    "session",
    new ResourceTemplate("aptix://sessions/{sessionId}", {
      list: async () => ({
        resources: (await recentSessions(db, caller)).map((s) => ({
          uri: `aptix://sessions/${s.sessionId}`,
          name: `session-${s.sessionId.slice(0, 12)}`,
          title: `Session ${s.sessionId.slice(0, 12)}… (${s.mode}, ${s.createdAt})`,
          mimeType: "text/markdown",
        })),
      }),
      // A client that lets its user pick a session offers the caller's recent ones, by the start of their id.
      complete: {
        sessionId: async (value) =>
          (await recentSessions(db, caller))
            .map((s) => s.sessionId)
            .filter((id) => id.startsWith(value.trim().toLowerCase())),
      },
    }),
    {
      title: "An agent session's transcript",
      description: "The conversation of one of your sessions.",
      mimeType: "text/markdown",
    },
    async (uri, { sessionId }) => {
      const id = String(sessionId);
      const outcome = await stub(id)?.getSession(caller);
      if (!outcome?.ok) throw new McpError(ErrorCode.InvalidParams, sessionNotFound(id).message);
      return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: transcript(outcome.value) }] };
    },
  );

  return server;
}

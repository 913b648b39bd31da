// One session object's connection to one MCP server, through the official SDK's client over Streamable HTTP:
// connected when first needed, kept for later calls, dropped (and made again) after a failure. It lists the
// server's tools, calls them with the turn's signal and the server's timeout, and routes the server's
// elicitation requests to whoever asked for the call.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  McpError,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { context, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { ATTR } from "../observability/tracing/attributes";
import { startChildSpan, traceCarrier, tracedFetch } from "../observability/tracing/tracing";
import type { ElicitationRequest } from "../tools/elicitation";
import { type ElicitationAnswer, ElicitationSchema } from "../wire/elicitation";
import type { McpServerConfig } from "./mcp-server-registry";

/** Answers a server's elicitation (form mode): the user's choice, accept with content, decline or cancel. */
export type Elicit = (request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationAnswer>;

/** The server cannot be used as configured (a secret it needs is not set): its tools are left out. */
export class McpConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpConfigurationError";
  }
}

/** The call did not answer within the server's timeout (the reason its signal aborts with). */
export class McpTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`The MCP call did not answer within ${timeoutMs} ms.`);
    this.name = "McpTimeoutError";
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2_147_483_647;

/** A timeout that can stand still (while a person answers) and go on with what was left. */
class PausableTimeout {
  private readonly controller = new AbortController();
  private remaining: number;
  private startedAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Cleared for good (the call ended): a late resume() starts nothing. */
  private done = false;

  constructor(private readonly timeoutMs: number) {
    this.remaining = timeoutMs;
    this.resume();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  hold(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.remaining -= Date.now() - this.startedAt;
  }

  resume(): void {
    if (this.done || this.timer !== undefined || this.controller.signal.aborted) return;
    this.startedAt = Date.now();
    this.timer = setTimeout(
      () => this.controller.abort(new McpTimeoutError(this.timeoutMs)),
      Math.max(0, this.remaining),
    );
  }

  clear(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export const MCP_CLIENT_INFO = { name: "aptix-edge", version: "1" } as const;

export class McpConnection {
  private client: Promise<Client> | null = null;
  /** The elicitation handler of the call in flight (one call at a time per session object). */
  private elicit: Elicit | null = null;

  constructor(
    readonly config: McpServerConfig,
    /** The bearer token the server's `authSecret` names (null when that secret is not there). */
    private readonly token: () => string | null,
    /** Told when the server says its tool list changed. */
    private readonly onToolsChanged: () => void,
  ) {}

  /** Connected, or connecting. */
  get open(): boolean {
    return this.client !== null;
  }

  private headers(): Record<string, string> {
    if (!this.config.authSecret) return {};
    const token = this.token();
    if (token === null) {
      throw new McpConfigurationError(
        this.config.org === null
          ? `the secret ${this.config.authSecret} that MCP server '${this.config.name}' needs is not set`
          : `the secret ${this.config.authSecret} that MCP server '${this.config.name}' needs is not stored in its organization`,
      );
    }
    return { authorization: `Bearer ${token}` };
  }

  private connect(timeoutMs: number): Promise<Client> {
    const headers = this.headers();
    const client = new Client(MCP_CLIENT_INFO, {
      // Elicitation in form mode; no sampling: a server's request for a model call is declined (not advertised).
      capabilities: { elicitation: { form: {} } },
      // @cfworker/json-schema: ajv compiles validators with `new Function`, which Workers do not allow.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.onToolsChanged());
    // Sampling (a server's request for a model call) and anything else not advertised: refused in words.
    client.fallbackRequestHandler = async (request) => {
      throw new McpError(
        ErrorCode.MethodNotFound,
        request.method === "sampling/createMessage"
          ? "aptix-edge declines sampling requests: a server's model calls are not made on the user's behalf."
          : `aptix-edge does not answer ${request.method}.`,
      );
    };
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const params = request.params;
      // Form mode only (URL mode is not advertised); a schema outside MCP's flat form shape is declined.
      const schema = "requestedSchema" in params ? ElicitationSchema.safeParse(params.requestedSchema) : null;
      if (!this.elicit || !schema?.success) return { action: "decline" } satisfies ElicitResult;
      const answer = await this.elicit(
        { server: this.config.name, tool: "", message: params.message, requestedSchema: schema.data },
        extra.signal,
      );
      return { action: answer.action, ...(answer.content ? { content: answer.content } : {}) } satisfies ElicitResult;
    });
    // Each HTTP request carries the active trace context (the MCP call's span), so it shows in the server's trace.
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url), {
      requestInit: { headers },
      fetch: tracedFetch,
    });
    const connected = client.connect(transport, { timeout: timeoutMs }).then(() => client);
    connected.catch(() => {
      if (this.client === connected) this.client = null;
    });
    return connected;
  }

  private async ready(timeoutMs: number): Promise<Client> {
    this.client ??= this.connect(timeoutMs);
    return this.client;
  }

  /** Every tool the server lists (all pages). */
  async listTools(timeoutMs: number): Promise<Tool[]> {
    try {
      const client = await this.ready(timeoutMs);
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    } catch (error) {
      await this.drop();
      throw error;
    }
  }

  /**
   * Calls a tool. The server's timeout counts only while the server works: it stands still while the user is
   * asked for input (an elicitation), which the turn's own limits bound instead.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs: number; elicit?: Elicit },
  ): Promise<CallToolResult> {
    // The timeout and the turn's cancel hold from the start, connecting (again) included.
    const timer = new PausableTimeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timer.signal]) : timer.signal;
    let client: Client;
    try {
      client = await untilAborted(this.ready(options.timeoutMs), signal);
    } catch (error) {
      timer.clear();
      throw error;
    }
    const elicit = options.elicit;
    this.elicit = elicit
      ? async (request, requestSignal) => {
          timer.hold();
          try {
            return await elicit({ ...request, tool: name }, AbortSignal.any([requestSignal, signal]));
          } finally {
            timer.resume();
          }
        }
      : null;
    const url = new URL(this.config.url);
    const traced = startChildSpan(`tools/call ${name}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR.mcpMethodName]: "tools/call",
        [ATTR.toolName]: name,
        [ATTR.mcpServer]: this.config.name,
        [ATTR.serverAddress]: url.hostname,
        [ATTR.serverPort]: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
        "network.transport": "tcp",
        "network.protocol.name": "http",
      },
    });
    const call = async () => {
      // The trace context also rides in the request's `_meta` (the MCP conventions), for servers behind a proxy
      // that drops headers.
      const meta = traced ? traceCarrier(traced.context) : {};
      const result = await client.callTool(
        { name, arguments: args, ...(meta.traceparent ? { _meta: meta } : {}) },
        CallToolResultSchema,
        {
          signal,
          // The SDK's own timeout would keep counting while the user answers: the timer above replaces it.
          timeout: MAX_TIMER_MS,
        },
      );
      return result as CallToolResult;
    };
    try {
      const result = traced ? await context.with(traced.context, call) : await call();
      if (traced && result.isError) {
        traced.span.setAttribute(ATTR.errorType, "tool_error");
        traced.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return result;
    } catch (error) {
      if (traced) {
        traced.span.setAttribute(
          ATTR.errorType,
          error instanceof McpError ? String(error.code) : error instanceof Error ? error.name : "error",
        );
        if (error instanceof McpError) traced.span.setAttribute("rpc.response.status_code", String(error.code));
        traced.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      // A broken connection is made again next time; a refused, timed-out or cancelled call leaves it as it is.
      if (!signal.aborted && !(error instanceof McpError)) await this.drop();
      throw error;
    } finally {
      traced?.span.end();
      timer.clear();
      this.elicit = null;
    }
  }

  async drop(): Promise<void> {
    const current = this.client;
    this.client = null;
    if (!current) return;
    try {
      await (await current).close();
    } catch {
      // The connection is gone already.
    }
  }
}

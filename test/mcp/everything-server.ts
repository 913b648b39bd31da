// Vitest global setup (Node): starts the MCP reference server, @modelcontextprotocol/server-everything, in its
// Streamable HTTP mode on a free loopback port, and hands its URL to the Workers pool. No one here wrote it.
// Beside it, a small control server for what tests in workerd cannot do themselves: start another instance
// of the reference server and stop it (a server that goes away mid-session), and a proxy in front of the
// shared instance that wants a bearer token (a server that needs an auth secret).
import { randomUUID } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { TestProject } from "vitest/node";
import { z } from "zod";
import { freePort } from "../../bench/support/local-worker.ts";
import { startEverythingServer } from "./reference-server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    mcpEverythingUrl: string;
    mcpControlUrl: string;
  }
}

/** The token the control server's proxy wants (`Authorization: Bearer ...`); tests bind it as a secret. */
export const TEST_MCP_TOKEN = "test-mcp-token-3b7e9c";

/** Headers of Streamable HTTP that the proxy passes each way. */
const PASSED_REQUEST_HEADERS = ["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id"];
const PASSED_RESPONSE_HEADERS = ["content-type", "mcp-session-id", "cache-control"];

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Forwards one Streamable HTTP request to `target` and streams the answer back (JSON or SSE). */
async function forward(
  request: IncomingMessage,
  response: ServerResponse,
  target: string,
  read?: Buffer,
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const name of PASSED_REQUEST_HEADERS) {
    const value = request.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : (read ?? (await readBody(request)));
  const controller = new AbortController();
  response.on("close", () => controller.abort());
  const upstream = await fetch(target, {
    method: request.method ?? "GET",
    headers,
    ...(body ? { body } : {}),
    signal: controller.signal,
  });
  const answerHeaders: Record<string, string> = {};
  for (const name of PASSED_RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value) answerHeaders[name] = value;
  }
  response.writeHead(upstream.status, answerHeaders);
  if (!upstream.body) return void response.end();
  Readable.fromWeb(upstream.body as import("node:stream/web").ReadableStream)
    .on("error", () => response.destroy())
    .pipe(response);
}

/** The trace context each tools/call through `/traced/mcp` carried: its HTTP header and its `params._meta`. */
const tracedCalls: { tool: string; header: string | null; meta: string | null }[] = [];

/** Records the trace context of a tools/call body (a JSON-RPC request, or a batch of them). */
function recordTracedCall(request: IncomingMessage, body: Buffer): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString());
  } catch {
    return;
  }
  const ToolsCall = z.object({
    method: z.literal("tools/call"),
    params: z.object({ name: z.string(), _meta: z.looseObject({ traceparent: z.string().optional() }).optional() }),
  });
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const call = ToolsCall.safeParse(message);
    if (!call.success) continue;
    const header = request.headers.traceparent;
    tracedCalls.push({
      tool: call.data.params.name,
      header: typeof header === "string" ? header : null,
      meta: call.data.params._meta?.traceparent ?? null,
    });
  }
}

/** How many times each `key` of the odd server's slow tools was called (a restarted turn must not call a write twice). */
const slowCalls = new Map<string, number>();

/**
 * A server with what the reference server does not have: two tools whose derived names collide (`get-sum`,
 * `get_sum`), one whose parameter has no simple type (a union), and one that asks the client for a model call
 * (sampling) whatever the client advertised, and one that adds a tool (the server then says its list changed).
 * Stateful Streamable HTTP, built with the SDK's own server.
 */
function oddServer(): McpServer {
  const server = new McpServer({ name: "odd", version: "1" });
  const sum = { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } };
  const add = async ({ a, b }: { a: number; b: number }) => ({
    content: [{ type: "text" as const, text: `${a + b}` }],
  });
  server.registerTool("get-sum", sum, add);
  server.registerTool("get_sum", sum, add);
  server.registerTool(
    "either",
    { description: "Takes a string or a number.", inputSchema: { value: z.union([z.string(), z.number()]) } },
    async ({ value }) => ({ content: [{ type: "text", text: String(value) }] }),
  );
  // Adds a tool while the session lasts: the SDK's server then sends notifications/tools/list_changed.
  server.registerTool("add-tool", { description: "Adds the tool 'added'." }, async () => {
    server.registerTool("added", { description: "A tool added at run time." }, async () => ({
      content: [{ type: "text", text: "added ran" }],
    }));
    return { content: [{ type: "text", text: "added" }] };
  });
  // Asks the user two questions at once; answers which way each went.
  server.registerTool("ask-twice", { description: "Asks two questions at once." }, async () => {
    const schema = { type: "object" as const, properties: { answer: { type: "string" as const } } };
    const ask = (message: string) => server.server.elicitInput({ message, requestedSchema: schema });
    const answers = await Promise.all([ask("First?"), ask("Second?")]);
    return { content: [{ type: "text", text: answers.map((a) => a.action).join(",") }] };
  });
  // Tools that count their calls by `key` and take `ms` to answer the first one (later ones answer at once): one
  // only reads (safe to call again), one writes (not).
  const slow = { key: z.string(), ms: z.number() };
  const slowly =
    (verb: string) =>
    async ({ key, ms }: { key: string; ms: number }) => {
      const calls = (slowCalls.get(key) ?? 0) + 1;
      slowCalls.set(key, calls);
      // The wait does not keep the test process alive once the tests are done.
      if (calls === 1) await new Promise((resolve) => setTimeout(resolve, ms).unref());
      return { content: [{ type: "text" as const, text: `${verb} ${key}` }] };
    };
  server.registerTool(
    "slow-read",
    { description: "Reads slowly.", inputSchema: slow, annotations: { readOnlyHint: true } },
    slowly("read"),
  );
  server.registerTool(
    "slow-write",
    {
      description: "Writes slowly.",
      inputSchema: slow,
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
    },
    slowly("wrote"),
  );
  server.registerTool("ask-model", { description: "Asks the client's model a question." }, async () => {
    const answer = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "Say hi." } }],
      maxTokens: 10,
    });
    return { content: [{ type: "text", text: JSON.stringify(answer.content) }] };
  });
  return server;
}

/** The odd server's sessions (stateful, so a request it sends the client can be answered). */
const oddSessions = new Map<string, StreamableHTTPServerTransport>();

async function serveOdd(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = request.method === "POST" ? JSON.parse((await readBody(request)).toString() || "null") : undefined;
  const sessionId = request.headers["mcp-session-id"];
  const known = typeof sessionId === "string" ? oddSessions.get(sessionId) : undefined;
  if (known) return known.handleRequest(request, response, body);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      oddSessions.set(id, transport);
    },
  });
  transport.onclose = () => {
    if (transport.sessionId) oddSessions.delete(transport.sessionId);
  };
  await oddServer().connect(transport);
  await transport.handleRequest(request, response, body);
}

/**
 * The control server: `POST /instances` starts another reference server (`{id, url}`), `DELETE /instances/:id`
 * stops it; `/authed/mcp` is the shared server behind a bearer token (401 without it); `/echo-token/mcp` refuses
 * every token with a 401 that quotes it; `/odd/mcp` is oddServer, and
 * `GET /odd/calls/:key` says how many times its slow tools were called with that key; `/traced/mcp` is the shared
 * server behind a proxy that records the trace context of each tools/call (`GET /traced/calls`).
 */
async function startControlServer(shared: string): Promise<{ url: string; stop(): Promise<void> }> {
  const instances = new Map<string, Awaited<ReturnType<typeof startEverythingServer>>>();
  let next = 0;
  const server = createHttpServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://control").pathname;
    const handle = async () => {
      if (path === "/instances" && request.method === "POST") {
        const instance = await startEverythingServer();
        const id = String(++next);
        instances.set(id, instance);
        response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id, url: instance.url }));
        return;
      }
      const instance = /^\/instances\/(\w+)$/.exec(path);
      if (instance && request.method === "DELETE") {
        await instances.get(instance[1] ?? "")?.stop();
        instances.delete(instance[1] ?? "");
        response.writeHead(204).end();
        return;
      }
      if (path === "/odd/mcp") return serveOdd(request, response);
      const calls = /^\/odd\/calls\/([\w-]+)$/.exec(path);
      if (calls) {
        const count = slowCalls.get(calls[1] ?? "") ?? 0;
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ count }));
        return;
      }
      if (path === "/traced/mcp") {
        const body = request.method === "POST" ? await readBody(request) : undefined;
        if (body) recordTracedCall(request, body);
        await forward(request, response, shared, body);
        return;
      }
      if (path === "/traced/calls") {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(tracedCalls));
        return;
      }
      if (path === "/echo-token/mcp") {
        // A server that refuses every token, quoting it back, as many do in their 401's text.
        const sent = (request.headers.authorization ?? "").replace(/^Bearer /, "");
        const refusal = { error: "invalid_token", error_description: `The token '${sent}' is not valid here.` };
        response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify(refusal));
        return;
      }
      if (path === "/authed/mcp") {
        if (request.headers.authorization !== `Bearer ${TEST_MCP_TOKEN}`) {
          response.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
          return;
        }
        await forward(request, response, shared);
        return;
      }
      response.writeHead(404).end();
    };
    handle().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502).end(String(error));
      else response.destroy();
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await Promise.all([...instances.values()].map((i) => i.stop()));
      for (const transport of oddSessions.values()) await transport.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startEverythingServer();
  const control = await startControlServer(server.url);
  project.provide("mcpEverythingUrl", server.url);
  project.provide("mcpControlUrl", control.url);
  return async () => {
    await control.stop();
    await server.stop();
  };
}

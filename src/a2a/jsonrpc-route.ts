// POST /a2a/jsonrpc: the A2A JSON-RPC binding, by the SDK's own JsonRpcTransportHandler (it parses the envelope,
// dispatches the method, and answers errors with the protocol's codes). A streaming method (SendStreamingMessage,
// SubscribeToTask) is answered as server-sent events, one JSON-RPC response each; one refused before its first event
// is answered as a plain JSON-RPC error.
import { formatSSEEvent, SSE_HEADERS } from "@a2a-js/sdk";
import { JsonRpcTransportHandler } from "@a2a-js/sdk/server";
import { requireScope } from "../auth/middleware";
import type { AppContext } from "../http";
import { routes } from "../http";
import { JSONRPC_PATH } from "./agent-card";
import { a2aCall } from "./call";
import { unexpected } from "./guard";

const encoder = new TextEncoder();

type RpcResponse = Awaited<ReturnType<JsonRpcTransportHandler["handle"]>>;
type RpcStream = Extract<RpcResponse, AsyncGenerator<unknown>>;

function rpcError(id: unknown, error: unknown) {
  const validId = typeof id === "string" || typeof id === "number" ? id : null;
  return { jsonrpc: "2.0", id: validId, error: JsonRpcTransportHandler.mapToJSONRPCError(error) };
}

/** The id of a request body, for an error answered outside the transport handler (null when there is none). */
function idOf(body: string): unknown {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === "object" && parsed !== null && "id" in parsed ? parsed.id : null;
  } catch {
    return null;
  }
}

async function streamAnswer(c: AppContext, stream: RpcStream, id: unknown): Promise<Response> {
  const fail = (error: unknown) => rpcError(id, unexpected(c.var.logger, c.var.requestId, error));
  let first: IteratorResult<unknown>;
  try {
    first = await stream.next();
  } catch (error) {
    return c.json(fail(error));
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (!first.done) controller.enqueue(encoder.encode(formatSSEEvent(first.value)));
      if (first.done) controller.close();
    },
    async pull(controller) {
      try {
        const next = await stream.next();
        if (next.done) {
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(formatSSEEvent(next.value)));
      } catch (error) {
        controller.enqueue(encoder.encode(formatSSEEvent(fail(error))));
        controller.close();
      }
    },
    async cancel() {
      await stream.return(undefined);
    },
  });
  return new Response(first.done ? null : body, { headers: SSE_HEADERS });
}

export const a2aJsonRpcRoutes = routes().post(JSONRPC_PATH, requireScope("chat"), async (c) => {
  const text = await c.req.text();
  const { handler, context, checkVersion } = a2aCall(c, "JSONRPC");
  try {
    checkVersion();
  } catch (error) {
    return c.json(rpcError(idOf(text), error));
  }
  const answer = await new JsonRpcTransportHandler(handler).handle(text, context);
  if (Symbol.asyncIterator in answer) return streamAnswer(c, answer, idOf(text));
  return c.json(answer);
});

// POST /a2a/jsonrpc: the A2A JSON-RPC binding, by the SDK's own JsonRpcTransportHandler (it parses the envelope,
// dispatches the method, and answers errors with the protocol's codes). A streaming method (SendStreamingMessage,
// SubscribeToTask) is answered as server-sent events, one JSON-RPC response each; one refused before its first event
// is answered as a plain JSON-RPC error.
import { formatSSEEvent, SSE_HEADERS } from "@a2a-js/sdk";
import { A2A_ERROR_CODE } from "@a2a-js/sdk/errors";
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

async function streamAnswer(c: AppContext, stream: RpcStream, id: unknown): Promise<Response> {
  const fail = (error: unknown) => rpcError(id, unexpected(c.get("logger"), c.get("requestId"), error));
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

/**
 * The request body as a JSON object, or the JSON-RPC error that says why not (the SDK's transport takes a parsed
 * object; given `null` or an array it fails where it should refuse).
 */
function envelopeOf(text: string): { body: Record<string, unknown> } | { error: { code: number; message: string } } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { error: { code: A2A_ERROR_CODE.PARSE_ERROR, message: "The request body is not valid JSON." } };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return {
      error: { code: A2A_ERROR_CODE.INVALID_REQUEST, message: "The request body must be one JSON-RPC request object." },
    };
  }
  return { body: parsed as Record<string, unknown> };
}

export const a2aJsonRpcRoutes = routes().post(JSONRPC_PATH, requireScope("chat"), async (c) => {
  const envelope = envelopeOf(await c.req.text());
  if ("error" in envelope) return c.json({ jsonrpc: "2.0", id: null, error: envelope.error });
  const id = envelope.body.id;
  const { handler, context, checkVersion } = a2aCall(c, "JSONRPC");
  try {
    checkVersion();
    const answer = await new JsonRpcTransportHandler(handler).handle(envelope.body, context);
    if (Symbol.asyncIterator in answer) return streamAnswer(c, answer, id);
    return c.json(answer);
  } catch (error) {
    return c.json(rpcError(id, unexpected(c.get("logger"), c.get("requestId"), error)));
  }
});

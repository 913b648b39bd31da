// The A2A door's per-request pieces: the handler acting for the request's caller (guarded), the server call
// context the SDK's transports take, and the A2A-Version the request asks for, checked against the card's interfaces.
import { A2A_VERSION_HEADER } from "@a2a-js/sdk";
import { type A2ARequestHandler, ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import type { AppContext } from "../http";
import { callerOf, hintOf } from "../session/session-client";
import { agentCard } from "./agent-card";
import { guarded } from "./guard";
import { AptixA2AHandler } from "./request-handler";

/** The request's handler, its call context, and the binding's version check (throws VersionNotSupported). */
export function a2aCall(
  c: AppContext,
  binding: "JSONRPC" | "HTTP+JSON",
): { handler: A2ARequestHandler; context: ServerCallContext; checkVersion: () => void } {
  const origin = new URL(c.req.url).origin;
  const handler = new AptixA2AHandler({
    env: c.env,
    db: c.get("db"),
    caller: callerOf(c),
    origin,
    locationHint: hintOf(c),
    logger: c.get("logger"),
  });
  // A request without the header speaks 0.3, as the protocol says; this server speaks 1.0 only.
  const context = new ServerCallContext({ requestedVersion: c.req.header(A2A_VERSION_HEADER) ?? "0.3" });
  return {
    handler: guarded(handler, c.get("logger"), c.get("requestId")),
    context,
    checkVersion: () => validateVersion(context.requestedVersion, agentCard(origin, []), binding),
  };
}

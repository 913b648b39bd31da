// Peer (a) of bench/peers.ts: an AIChatAgent from @cloudflare/ai-chat, as its README builds one. onChatMessage
// runs the AI SDK's streamText loop over the conversation the SDK keeps in the agent's SQLite and returns the
// UI message stream; the SDK persists the user's message before the turn and the assistant's after it, and
// streams the chunks to the client over the agent's WebSocket (cf_agent_use_chat_request -> cf_agent_use_chat_response
// frames, the last one `done: true` once the reply is persisted). Routed by routeAgentRequest:
// /agents/chat-peer/<name>.
import { AIChatAgent, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import { routeAgentRequest } from "agents";
import { convertToModelMessages, streamText } from "ai";
import { countedEnv } from "../../src/observability/op-counts";
import { benchOps, type PeerEnv, peerModel, peerStopWhen, peerTools } from "./shared";

export class ChatPeer extends AIChatAgent<PeerEnv> {
  constructor(ctx: DurableObjectState, env: PeerEnv) {
    // bench:ops counts what the object asks of its bindings, as aptix's objects do (src/observability/op-counts.ts).
    super(ctx, countedEnv(env));
  }

  override async onChatMessage(_onFinish: unknown, options?: OnChatMessageOptions): Promise<Response> {
    const result = streamText({
      model: peerModel(this.env),
      instructions: this.env.SYSTEM_PROMPT,
      messages: await convertToModelMessages(this.messages),
      tools: peerTools(this.name),
      stopWhen: peerStopWhen(this.env),
      ...(options?.abortSignal ? { abortSignal: options.abortSignal } : {}),
    });
    return result.toUIMessageStreamResponse();
  }
}

export default {
  async fetch(request: Request, env: PeerEnv): Promise<Response> {
    if (new URL(request.url).pathname === "/healthz") return new Response("ok");
    const ops = benchOps(request, env);
    if (ops) return ops;
    return (await routeAgentRequest(request, countedEnv(env))) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<PeerEnv>;

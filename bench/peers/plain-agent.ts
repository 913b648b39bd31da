// Peer (b) of bench/peers.ts: a plain Agent from `agents` running the same AI SDK streamText loop in its HTTP
// handler. POST /agents/plain-peer/<name> with {"content": "..."}: the conversation so far is read from the
// agent's SQLite (this.sql), the user's message is stored, the loop runs to its end, its response messages
// (assistant and tool messages) are stored, and only then the turn is answered as JSON. GET answers the
// number of stored messages (bench/peers.ts opens a session with it, so the object exists before the turn).
import { Agent, routeAgentRequest } from "agents";
import { type ModelMessage, streamText } from "ai";
import { countedEnv } from "../../src/observability/op-counts";
import { benchOps, type PeerEnv, peerModel, peerStopWhen, peerTools } from "./shared";

export class PlainPeer extends Agent<PeerEnv> {
  constructor(ctx: DurableObjectState, env: PeerEnv) {
    // bench:ops counts what the object asks of its bindings, as aptix's objects do (src/observability/op-counts.ts).
    super(ctx, countedEnv(env));
  }

  override onStart(): void {
    this.sql`create table if not exists conversation (
      seq integer primary key autoincrement,
      message text not null,
      created_at integer not null
    )`;
  }

  override async onRequest(request: Request): Promise<Response> {
    if (request.method === "GET") {
      const [row] = this.sql<{ n: number }>`select count(*) as n from conversation`;
      return Response.json({ messages: row?.n ?? 0 });
    }
    if (request.method !== "POST") return new Response("Method not allowed", { status: 405 });
    const { content } = (await request.json()) as { content?: unknown };
    if (typeof content !== "string" || content.length === 0) return new Response("content?", { status: 400 });
    const history = this.sql<{ message: string }>`select message from conversation order by seq`.map(
      (row) => JSON.parse(row.message) as ModelMessage,
    );
    const user: ModelMessage = { role: "user", content };
    this.store(user);
    const result = streamText({
      model: peerModel(this.env),
      instructions: this.env.SYSTEM_PROMPT,
      messages: [...history, user],
      tools: peerTools(this.name),
      stopWhen: peerStopWhen(this.env),
      abortSignal: request.signal,
    });
    const steps = await result.steps;
    for (const message of await result.responseMessages) this.store(message);
    return Response.json({
      text: await result.text,
      steps: steps.length,
      toolCalls: steps.reduce((n, step) => n + step.toolCalls.length, 0),
      toolResults: steps.reduce((n, step) => n + step.toolResults.length, 0),
    });
  }

  private store(message: ModelMessage): void {
    this.sql`insert into conversation (message, created_at) values (${JSON.stringify(message)}, ${Date.now()})`;
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

// A streaming OpenAI-compatible upstream for bench:ws: every chat completion streams N tokens, and each token's
// text is the time it was written ("t=<ms>;"), so a client in this process can tell how long it took to arrive.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A wall clock with sub-millisecond resolution, the same for the upstream and the clients of this process. */
export const now = (): number => performance.timeOrigin + performance.now();

export interface TokenPlan {
  tokens: number;
  /** Pause before each token; 0 writes them back to back. */
  intervalMs: number;
}

export interface TokenUpstream {
  /** For LLM_BASE_URL, for example http://127.0.0.1:40123/v1 */
  baseUrl: string;
  /** What the next chat completions stream. */
  plan: TokenPlan;
  close(): Promise<void>;
}

const STAMP = /^t=(\d+(?:\.\d+)?);$/;

/** The upstream's write time carried by one token's text, or null. */
export function tokenStamp(text: unknown): number | null {
  const match = typeof text === "string" ? STAMP.exec(text) : null;
  return match ? Number(match[1]) : null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const body = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "bench-tokens",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

async function stream(res: ServerResponse, plan: TokenPlan): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(chunk({ role: "assistant", content: "" }));
  for (let i = 0; i < plan.tokens; i++) {
    if (plan.intervalMs > 0) await sleep(plan.intervalMs);
    res.write(chunk({ content: `t=${now().toFixed(3)};` }));
  }
  res.write(chunk({}, "stop"));
  res.end("data: [DONE]\n\n");
}

export async function startTokenUpstream(): Promise<TokenUpstream> {
  const upstream = { plan: { tokens: 1, intervalMs: 0 } };
  const server = createServer(async (req, res) => {
    for await (const _ of req) {
      // The request body (the conversation) is not needed.
    }
    if (req.method === "POST" && req.url === "/v1/chat/completions") return stream(res, upstream.plan);
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "Not found.", type: "not_found_error", code: null, param: null } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(upstream, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

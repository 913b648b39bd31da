// Benchmark of the wires (issue 28): what answering on another client's dialect costs, in the same run.
//   The agent's doors: the same streamed one-step answer through /agent/v1/responses and /agent/v1/messages
//   against /agent/v1/chat/completions, each conversation continued the same way as its baseline's: by its session
//   (X-Aptix-Session), or by what the client resends (the whole history; for the Responses door also
//   previous_response_id, which like a resent history costs a read of D1 before the turn).
//   The passthrough on the Messages wire: POST /v1/messages translated to an OpenAI-compatible upstream's chat
//   completions and back, against the same request relayed byte for byte to an Anthropic upstream (an `anthropic`
//   model route); both scripted upstreams stream the same text in the same fragments.
// Two times per request: to the first text token (split at the upstream: until it has the whole request, and from
// its first byte on), and to the stream's end. One Worker under wrangler dev (without its local trace collector,
// whose cost grows with the spans a request makes), one request at a time, all ways taking turns so all see the same
// load; each way has its own script, so its requests can be told apart at the upstream. Goal: each way within 1.05x
// of its baseline (medians).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedAnthropic } from "../test/upstream/scripted-anthropic.ts";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { sseData } from "./support/sse-data.ts";
import { fixed, percentile, table } from "./support/stats.ts";

const UPSTREAM_KEY = "sk-bench-upstream";
const ANTHROPIC_KEY = "sk-ant-bench-upstream";
/** seeds/local.sql's key (scopes chat and admin), which the local database of `startLocalWorker` holds. */
const CLIENT_KEY = "dev-key";
const WARMUP = 20;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const MESSAGES_PER_SESSION = 10;
const GOAL = 1.05;
const ANSWER = "Hello from the benchmark upstream, chunk by chunk.";
const ANTHROPIC_ROUTE = "bench-claude";

const now = () => performance.timeOrigin + performance.now();

interface Sent {
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

interface Way {
  name: string;
  /** The request for message `i` of the conversation. */
  request(i: number): Sent;
  /** The text a stream event's data adds (or undefined); throws on an error event. */
  textOf(data: Record<string, unknown>): string | undefined;
  /** After a stream: what the conversation keeps (its session, its last response). */
  after?(response: Response, events: Record<string, unknown>[], text: string): void;
  /** The way this one is measured against (none for a baseline). */
  baseline?: Way;
  /** Starts a new conversation. */
  reset?(): void;
  /** This way's own script on its upstream, so its requests can be told apart there. */
  script: { id: string; marker: string };
  upstream: "chat" | "anthropic";
  firstToken: number[];
  total: number[];
  /** Clock stamps of each measured request: sent, and its first token received. */
  sentAt: number[];
  tokenAt: number[];
}

/** What each way is made with: its name, and its own script on one of the upstreams. */
type WayBase = Pick<Way, "name" | "script" | "upstream" | "firstToken" | "total" | "sentAt" | "tokenAt">;

type NewScript = (upstream: "chat" | "anthropic") => { id: string; marker: string };

function wayBase(name: string, upstream: "chat" | "anthropic", script: NewScript): WayBase {
  return { name, script: script(upstream), upstream, firstToken: [], total: [], sentAt: [], tokenAt: [] };
}

const question = (i: number, marker: string) => `Say hello (${i}). ${marker}`;
const bearer = { authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json" };

function failIfError(data: Record<string, unknown>, path: string): void {
  if (data.error || data.type === "error" || data.type === "response.failed") {
    throw new Error(`${path} streamed an error: ${JSON.stringify(data).slice(0, 300)}`);
  }
}

/** A door way that continues its session by X-Aptix-Session, starting over every MESSAGES_PER_SESSION messages. */
function sessionWay(
  base: WayBase,
  path: string,
  body: (i: number, marker: string) => unknown,
  textOf: (data: Record<string, unknown>) => string | undefined,
): Way {
  let session: string | null = null;
  return {
    ...base,
    request: (i) => ({
      path,
      headers: session ? { ...bearer, "x-aptix-session": session } : bearer,
      body: body(i, base.script.marker),
    }),
    textOf,
    after: (response) => {
      session = response.headers.get("x-aptix-session");
    },
    reset: () => {
      session = null;
    },
  };
}

/**
 * A door way whose client resends the whole conversation without the header (most chat UIs and SDKs): its session is
 * found by the history. Chat completions, Messages and Responses clients all send it as role/content messages.
 */
function historyWay(
  base: WayBase,
  path: string,
  body: (list: { role: string; content: string }[]) => unknown,
  textOf: (data: Record<string, unknown>) => string | undefined,
): Way {
  let history: { role: string; content: string }[] = [];
  let asked = "";
  return {
    ...base,
    request: (i) => {
      asked = question(i, base.script.marker);
      return { path, headers: bearer, body: body([...history, { role: "user", content: asked }]) };
    },
    textOf,
    after: (_, __, text) => {
      history.push({ role: "user", content: asked }, { role: "assistant", content: text });
    },
    reset: () => {
      history = [];
    },
  };
}

const chatText = (data: Record<string, unknown>) =>
  (data.choices as { delta?: { content?: string } }[] | undefined)?.[0]?.delta?.content ?? undefined;
const responsesText = (data: Record<string, unknown>) =>
  data.type === "response.output_text.delta" ? String(data.delta) : undefined;
const messagesText = (data: Record<string, unknown>) => {
  const delta = data.delta as { type?: string; text?: string } | undefined;
  return data.type === "content_block_delta" && delta?.type === "text_delta" ? delta.text : undefined;
};

function ways(script: NewScript): { agent: Way[]; passthrough: Way[] } {
  let previous: string | null = null;
  const byPrevious = wayBase("/agent/v1/responses, previous_response_id", "chat", script);
  const responsesByPrevious: Way = {
    ...byPrevious,
    request: (i) => ({
      path: "/agent/v1/responses",
      headers: bearer,
      body: {
        model: "aptix-agent/general",
        stream: true,
        input: question(i, byPrevious.script.marker),
        ...(previous ? { previous_response_id: previous } : {}),
      },
    }),
    textOf: responsesText,
    after: (_, events) => {
      const done = events.find((e) => e.type === "response.completed") as { response?: { id?: string } } | undefined;
      previous = done?.response?.id ?? null;
    },
    reset: () => {
      previous = null;
    },
  };
  const anthropicHeaders = {
    "x-api-key": CLIENT_KEY,
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
  };
  const messagesBody = (model: string, i: number, marker: string) => ({
    model,
    max_tokens: 256,
    stream: true,
    messages: [{ role: "user", content: question(i, marker) }],
  });
  const passthroughWay = (name: string, upstream: "chat" | "anthropic", model: string): Way => {
    const base = wayBase(name, upstream, script);
    return {
      ...base,
      request: (i) => ({
        path: "/v1/messages",
        headers: anthropicHeaders,
        body: messagesBody(model, i, base.script.marker),
      }),
      textOf: messagesText,
    };
  };
  const relayed = passthroughWay("/v1/messages, relayed (anthropic route)", "anthropic", ANTHROPIC_ROUTE);
  const chatBody = (messages: unknown) => ({ model: "aptix-agent/general", stream: true, messages });
  const responsesBody = (input: unknown) => ({ model: "aptix-agent/general", stream: true, input });
  const agentMessagesBody = (messages: unknown) => ({ ...chatBody(messages), max_tokens: 256 });
  const chatByHeader = sessionWay(
    wayBase("/agent/v1/chat/completions, X-Aptix-Session", "chat", script),
    "/agent/v1/chat/completions",
    (i, marker) => chatBody([{ role: "user", content: question(i, marker) }]),
    chatText,
  );
  const chatByHistory = historyWay(
    wayBase("/agent/v1/chat/completions, history resent", "chat", script),
    "/agent/v1/chat/completions",
    chatBody,
    chatText,
  );
  const against = (baseline: Way, way: Way): Way => Object.assign(way, { baseline });
  return {
    agent: [
      chatByHeader,
      against(
        chatByHeader,
        sessionWay(
          wayBase("/agent/v1/responses, X-Aptix-Session", "chat", script),
          "/agent/v1/responses",
          (i, marker) => responsesBody(question(i, marker)),
          responsesText,
        ),
      ),
      against(
        chatByHeader,
        sessionWay(
          wayBase("/agent/v1/messages, X-Aptix-Session", "chat", script),
          "/agent/v1/messages",
          (i, marker) => agentMessagesBody([{ role: "user", content: question(i, marker) }]),
          messagesText,
        ),
      ),
      chatByHistory,
      against(chatByHistory, responsesByPrevious),
      against(
        chatByHistory,
        historyWay(
          wayBase("/agent/v1/responses, input resent", "chat", script),
          "/agent/v1/responses",
          responsesBody,
          responsesText,
        ),
      ),
      against(
        chatByHistory,
        historyWay(
          wayBase("/agent/v1/messages, history resent", "chat", script),
          "/agent/v1/messages",
          agentMessagesBody,
          messagesText,
        ),
      ),
    ],
    passthrough: [
      relayed,
      against(relayed, passthroughWay("/v1/messages, translated (chat route)", "chat", "bench-model")),
    ],
  };
}

/** One streamed request of `way`: its events parsed, its text checked, its two times recorded. */
async function timeStream(url: string, way: Way, i: number): Promise<void> {
  if (i % MESSAGES_PER_SESSION === 0) way.reset?.();
  const { path, headers, body } = way.request(i);
  const sentAt = now();
  const response = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  if (response.status !== 200 || !response.body) {
    throw new Error(`${way.name} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  const events: Record<string, unknown>[] = [];
  let text = "";
  let tokenAt: number | null = null;
  for await (const data of sseData(response.body)) {
    const parsed = JSON.parse(data) as Record<string, unknown>;
    failIfError(parsed, path);
    events.push(parsed);
    const added = way.textOf(parsed);
    if (added) {
      tokenAt ??= now();
      text += added;
    }
  }
  const endAt = now();
  if (tokenAt === null || text !== ANSWER)
    throw new Error(`${way.name} streamed another answer: ${JSON.stringify(text)}`);
  way.after?.(response, events, text);
  way.firstToken.push(tokenAt - sentAt);
  way.sentAt.push(sentAt);
  way.tokenAt.push(tokenAt);
  way.total.push(endAt - sentAt);
}

/** Where a way's first token waits (medians): until its upstream has the whole request, and from its first byte on. */
type Split = (w: Way) => { before: number; relay: number };

function report(title: string, group: Way[], split: Split): string[] {
  const median = (values: number[]) => percentile(values, 50);
  const ratio = (w: Way, of: (w: Way) => number[]) =>
    w.baseline ? `${fixed(median(of(w)) / median(of(w.baseline)))}x` : "";
  const rows = group.map((w) => [
    w.name,
    fixed(median(w.firstToken)),
    fixed(percentile(w.firstToken, 99)),
    ratio(w, (x) => x.firstToken),
    fixed(split(w).before),
    fixed(split(w).relay),
    fixed(median(w.total)),
    fixed(percentile(w.total, 99)),
    ratio(w, (x) => x.total),
  ]);
  const goals = group.flatMap((w) => {
    if (!w.baseline) return [];
    const first = median(w.firstToken) / median(w.baseline.firstToken);
    const total = median(w.total) / median(w.baseline.total);
    const met = first <= GOAL && total <= GOAL;
    return [
      `goal: within ${GOAL}x of ${w.baseline.name} (medians), ${w.name}: ${met ? "met" : "MISSED"} (first token ${fixed(first)}x, total ${fixed(total)}x)`,
    ];
  });
  return [
    "",
    title,
    table(["ms", "first token p50", "p99", "/ base", "to upstream", "relay", "total p50", "p99", "/ base"], rows),
    ...goals,
  ];
}

async function putAnthropicRoute(url: string, baseUrl: string): Promise<void> {
  const response = await fetch(`${url}/admin/model-routes/${ANTHROPIC_ROUTE}`, {
    method: "PUT",
    headers: bearer,
    body: JSON.stringify({
      provider: "anthropic",
      model: "claude-bench",
      baseUrl,
      apiKeySecret: "BENCH_ANTHROPIC_KEY",
    }),
  });
  if (!response.ok) throw new Error(`the anthropic route was refused: ${response.status} ${await response.text()}`);
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-"));
  const upstream = await startScriptedUpstream({ apiKey: UPSTREAM_KEY });
  const anthropic = await startScriptedAnthropic({ apiKey: ANTHROPIC_KEY });
  let worker: LocalWorker | null = null;
  const stopAll = async () => {
    await worker?.stop();
    await upstream.close();
    await anthropic.close();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    console.log("Starting the Worker (wrangler dev, without the local trace collector) ...");
    const config = await benchConfig(tmp, true);
    worker = await startLocalWorker({
      config,
      vars: { LLM_BASE_URL: `${upstream.url}/v1`, LLM_API_KEY: UPSTREAM_KEY, BENCH_ANTHROPIC_KEY: ANTHROPIC_KEY },
      localObservability: false,
    });
    await putAnthropicRoute(worker.url, anthropic.url);
    const script: NewScript = (which) =>
      which === "chat"
        ? upstream.createScript([{ type: "completion", content: ANSWER, chunkSize: 8 }], { repeat: true })
        : anthropic.createScript([{ type: "message", content: [{ type: "text", text: ANSWER }], chunkSize: 8 }], {
            repeat: true,
          });
    const { agent, passthrough } = ways(script);
    const all = [...agent, ...passthrough];
    const url = worker.url;
    for (let i = 0; i < WARMUP; i++) for (const w of all) await timeStream(url, w, i);
    for (const w of all) {
      w.firstToken = [];
      w.total = [];
      w.sentAt = [];
      w.tokenAt = [];
    }
    for (let i = 0; i < SAMPLES; i++) {
      for (let k = 0; k < all.length; k++) await timeStream(url, all[(k + i) % all.length] as Way, i);
    }
    const split: Split = (w) => {
      const sent = (w.upstream === "chat" ? upstream : anthropic).requests(w.script.id).slice(WARMUP);
      const before = w.sentAt.map((at, i) => (sent[i]?.receivedAt ?? Number.NaN) - at);
      const relay = w.tokenAt.map((at, i) => at - (sent[i]?.firstByteAt ?? Number.NaN));
      return { before: percentile(before, 50), relay: percentile(relay, 50) };
    };
    console.log(
      [
        "",
        "Wires benchmark: the Worker under wrangler dev (no local trace collector) in front of a scripted OpenAI-compatible",
        `and a scripted Anthropic upstream streaming the same text; ${SAMPLES} streams per way after ${WARMUP} warm-up, one`,
        `at a time, all ways taking turns; a conversation starts over every ${MESSAGES_PER_SESSION} messages.`,
        ...report(
          "The agent's doors, against its chat completions door continued the same way (by its session, or by the history):",
          agent,
          split,
        ),
        ...report(
          "The passthrough on the Messages wire, translated against relayed byte for byte:",
          passthrough,
          split,
        ),
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

await main();

// Benchmark of the wires (issue 28): what answering on another client's dialect costs, in the same run.
//   The agent's doors: the same streamed one-step answer through /agent/v1/responses and /agent/v1/messages
//   against /agent/v1/chat/completions (the baseline), each continuing its own session by X-Aptix-Session (and the
//   Responses door also by previous_response_id, the way its clients continue).
//   The passthrough on the Messages wire: POST /v1/messages translated to an OpenAI-compatible upstream's chat
//   completions and back, against the same request relayed byte for byte to an Anthropic upstream (an `anthropic`
//   model route); both scripted upstreams stream the same text in the same fragments.
// Two times per request: to the first text token, and to the stream's end. One Worker under wrangler dev (without
// its local trace collector, whose cost grows with the spans a request makes), one request at a time, all ways
// taking turns so all see the same load. Goal: each way within 1.05x of its baseline (median).
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
  after?(response: Response, events: Record<string, unknown>[]): void;
  /** Starts a new conversation. */
  reset?(): void;
  firstToken: number[];
  total: number[];
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
  name: string,
  path: string,
  body: (i: number) => unknown,
  textOf: (data: Record<string, unknown>) => string | undefined,
): Way {
  let session: string | null = null;
  return {
    name,
    request: (i) => ({ path, headers: session ? { ...bearer, "x-aptix-session": session } : bearer, body: body(i) }),
    textOf,
    after: (response) => {
      session = response.headers.get("x-aptix-session");
    },
    reset: () => {
      session = null;
    },
    firstToken: [],
    total: [],
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

function ways(marker: string): { agent: Way[]; passthrough: Way[] } {
  let previous: string | null = null;
  const responsesByPrevious: Way = {
    name: "/agent/v1/responses, previous_response_id",
    request: (i) => ({
      path: "/agent/v1/responses",
      headers: bearer,
      body: {
        model: "aptix-agent/general",
        stream: true,
        input: question(i, marker),
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
    firstToken: [],
    total: [],
  };
  const anthropicHeaders = {
    "x-api-key": CLIENT_KEY,
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
  };
  const messagesBody = (model: string, i: number) => ({
    model,
    max_tokens: 256,
    stream: true,
    messages: [{ role: "user", content: question(i, marker) }],
  });
  return {
    agent: [
      sessionWay(
        "/agent/v1/chat/completions",
        "/agent/v1/chat/completions",
        (i) => ({
          model: "aptix-agent/general",
          stream: true,
          messages: [{ role: "user", content: question(i, marker) }],
        }),
        chatText,
      ),
      sessionWay(
        "/agent/v1/responses, X-Aptix-Session",
        "/agent/v1/responses",
        (i) => ({ model: "aptix-agent/general", stream: true, input: question(i, marker) }),
        responsesText,
      ),
      responsesByPrevious,
      sessionWay(
        "/agent/v1/messages, X-Aptix-Session",
        "/agent/v1/messages",
        (i) => messagesBody("aptix-agent/general", i),
        messagesText,
      ),
    ],
    passthrough: [
      {
        name: "/v1/messages, relayed (anthropic route)",
        request: (i) => ({ path: "/v1/messages", headers: anthropicHeaders, body: messagesBody(ANTHROPIC_ROUTE, i) }),
        textOf: messagesText,
        firstToken: [],
        total: [],
      },
      {
        name: "/v1/messages, translated (chat route)",
        request: (i) => ({ path: "/v1/messages", headers: anthropicHeaders, body: messagesBody("bench-model", i) }),
        textOf: messagesText,
        firstToken: [],
        total: [],
      },
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
  way.after?.(response, events);
  way.firstToken.push(tokenAt - sentAt);
  way.total.push(endAt - sentAt);
}

function report(title: string, group: Way[]): string[] {
  const [base] = group as [Way];
  const median = (values: number[]) => percentile(values, 50);
  const rows = group.map((w) => [
    w.name,
    fixed(median(w.firstToken)),
    fixed(percentile(w.firstToken, 99)),
    w === base ? "" : `${fixed(median(w.firstToken) / median(base.firstToken))}x`,
    fixed(median(w.total)),
    fixed(percentile(w.total, 99)),
    w === base ? "" : `${fixed(median(w.total) / median(base.total))}x`,
  ]);
  const goals = group
    .filter((w) => w !== base)
    .map((w) => {
      const first = median(w.firstToken) / median(base.firstToken);
      const total = median(w.total) / median(base.total);
      const met = first <= GOAL && total <= GOAL;
      return `goal: within ${GOAL}x of ${base.name} (medians), ${w.name}: ${met ? "met" : "MISSED"} (first token ${fixed(first)}x, total ${fixed(total)}x)`;
    });
  return ["", title, table(["ms", "first token p50", "p99", "/ base", "total p50", "p99", "/ base"], rows), ...goals];
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
    const chat = upstream.createScript([{ type: "completion", content: ANSWER, chunkSize: 8 }], { repeat: true });
    const claude = anthropic.createScript(
      [{ type: "message", content: [{ type: "text", text: ANSWER }], chunkSize: 8 }],
      { repeat: true },
    );
    // Each question carries both scripts' markers: each upstream answers from its own.
    const { agent, passthrough } = ways(`${chat.marker} ${claude.marker}`);
    const all = [...agent, ...passthrough];
    const url = worker.url;
    for (let i = 0; i < WARMUP; i++) for (const w of all) await timeStream(url, w, i);
    for (const w of all) {
      w.firstToken = [];
      w.total = [];
    }
    for (let i = 0; i < SAMPLES; i++) {
      for (let k = 0; k < all.length; k++) await timeStream(url, all[(k + i) % all.length] as Way, i);
    }
    console.log(
      [
        "",
        "Wires benchmark: the Worker under wrangler dev (no local trace collector) in front of a scripted OpenAI-compatible",
        `and a scripted Anthropic upstream streaming the same text; ${SAMPLES} streams per way after ${WARMUP} warm-up, one`,
        `at a time, all ways taking turns; a conversation starts over every ${MESSAGES_PER_SESSION} messages.`,
        ...report("The agent's doors, against its chat completions door:", agent),
        ...report("The passthrough on the Messages wire, translated against relayed byte for byte:", passthrough),
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

await main();

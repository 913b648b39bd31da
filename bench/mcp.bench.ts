// npm run bench:mcp — what one MCP tool call costs through the agent loop, against a direct call with the
// official SDK's client to the same server (the reference server, server-everything, on loopback), measured
// in the same run inside the Workers runtime (vitest bench mode, workerd, real AgentSession objects whose
// model is the scripted upstream answering at once).
//
// One MCP call through the loop is the difference between a turn whose model asks for ten `echo` calls at
// once and the same turn asking for one, divided by nine: each extra call's planning, schema check, stored
// state, frames, the call itself over the session object's connection, and its result read for the model.
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { McpServerRegistry } from "../src/mcp/mcp-server-registry";
import { upsertMode } from "../src/modes/catalog-service";
import type { AgentSession } from "../src/session/agent-session";
import type { CreatedScript, ScriptStep } from "../test/upstream/script-types";
import { fixed, ratio, type Summary, summarize, table } from "./support/stats.ts";

const CALLER = { org: "bench-org", user: "bench-user", keyId: "bench-key" };
const SERVER = "benchev";
const MODE = "bench_mcp";
const ECHO = { name: `${SERVER}__echo`, arguments: JSON.stringify({ message: "hello" }) };
const WIDE = 10;
const SAMPLES = 30;

const DIRECT = "direct SDK call: client.callTool(echo) over Streamable HTTP";
const TURN = (calls: number) => `turn whose model asks for ${calls} echo call${calls === 1 ? "" : "s"} at once`;

const samples = new Map<string, number[]>();
type SessionStub = DurableObjectStub<AgentSession>;

function record(name: string, ms: number): void {
  samples.set(name, [...(samples.get(name) ?? []), ms]);
}

async function createScript(steps: ScriptStep[]): Promise<string> {
  const response = await fetch(`${env.TEST_UPSTREAM_URL}/__scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps, record: false }),
  });
  if (response.status !== 201) throw new Error(`the scripted upstream refused a script: ${await response.text()}`);
  return ((await response.json()) as CreatedScript).marker;
}

function turnSteps(calls: number): ScriptStep[] {
  return [
    { type: "completion", toolCalls: Array.from({ length: calls }, () => ECHO) },
    { type: "completion", content: "Echoed." },
  ];
}

async function runTurn(stub: SessionStub, content: string, calls: number): Promise<void> {
  const outcome = await stub.sendMessage(CALLER, content);
  if (!outcome.ok) throw new Error(`the turn was refused: ${outcome.message}`);
  const { status, toolCalls } = outcome.value;
  const echoed = toolCalls.filter((c) => c.resultJson?.includes("Echo: hello")).length;
  if (status !== "completed" || echoed < calls) {
    throw new Error(`unexpected turn: ${status}, ${echoed} of ${calls} calls echoed (${JSON.stringify(toolCalls[0])})`);
  }
}

/**
 * A session in the MCP mode whose object has already connected to the server and listed its tools (one
 * warm-up turn), with the script of its measured turn: discovery is a once-per-object cost, not a call's.
 */
async function warmSession(calls: number): Promise<{ stub: SessionStub; content: string }> {
  const id = env.AGENT_SESSION.newUniqueId();
  const stub = env.AGENT_SESSION.get(id);
  await stub.initialize({ sessionId: id.toString(), ...CALLER, mode: MODE, parentSessionId: null });
  const marker = await createScript([...turnSteps(1), ...turnSteps(calls)]);
  await runTurn(stub, `Warm up ${marker}`, 1);
  return { stub, content: "Echo again" };
}

let client: Client;
const prepared = new Map<number, { stub: SessionStub; content: string }[]>();

beforeAll(async () => {
  await new McpServerRegistry(env.DB, null).put(SERVER, {
    url: env.TEST_MCP_EVERYTHING_URL,
    description: "The MCP reference server.",
    authSecret: null,
    approval: "never",
    tools: ["echo"],
    timeoutMs: 30_000,
    category: null,
    enabled: true,
  });
  await upsertMode(env.DB, null, MODE, {
    displayName: "Bench MCP",
    description: "Echo through MCP.",
    systemPromptSummary: "",
    systemPrompt: "Call echo when asked.",
    isDefault: false,
    humanRoleHints: null,
    exampleUtterances: null,
    tools: [`mcp:${SERVER}`],
    approvalRequiredTools: [],
    modelRoute: "default",
    memory: true,
  });
  client = new Client({ name: "bench", version: "1" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(new StreamableHTTPClientTransport(new URL(env.TEST_MCP_EVERYTHING_URL)));
  for (const calls of [1, WIDE]) {
    const sessions = [];
    for (let i = 0; i < SAMPLES + 2; i++) sessions.push(await warmSession(calls));
    prepared.set(calls, sessions);
  }
}, 300_000);

async function timed(name: string, op: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await op();
  record(name, performance.now() - started);
}

describe("MCP tool call", () => {
  let round = 0;
  bench(
    "one round: direct SDK calls, a 1-call turn and a 10-call turn",
    async () => {
      const index = round++;
      const measuring = index >= 2;
      const one = prepared.get(1)?.[index];
      const wide = prepared.get(WIDE)?.[index];
      if (!one || !wide) throw new Error("no prepared session left");
      const direct = async () => {
        const result = await client.callTool({ name: "echo", arguments: { message: "hello" } });
        if (result.isError) throw new Error("the direct call failed");
      };
      for (let i = 0; i < WIDE; i++) {
        if (measuring) await timed(DIRECT, direct);
        else await direct();
      }
      if (measuring) {
        await timed(TURN(1), () => runTurn(one.stub, one.content, 1));
        await timed(TURN(WIDE), () => runTurn(wide.stub, wide.content, WIDE));
      } else {
        await runTurn(one.stub, one.content, 1);
        await runTurn(wide.stub, wide.content, WIDE);
      }
    },
    { time: 0, iterations: SAMPLES, warmupTime: 0, warmupIterations: 2 },
  );
});

afterAll(async () => {
  await client?.close();
  const get = (name: string): Summary => summarize(samples.get(name) ?? []);
  const direct = get(DIRECT);
  const one = get(TURN(1));
  const wide = get(TURN(WIDE));
  const perCall = (wide.mean - one.mean) / (WIDE - 1);
  const perCallP50 = (wide.p50 - one.p50) / (WIDE - 1);
  const row = (name: string, mean: number, s?: Summary) => [
    name,
    fixed(mean),
    s ? fixed(s.p50, 1) : "",
    s ? String(s.count) : "",
    ratio(mean, direct.mean),
  ];
  console.log(
    `\n${table(
      ["measurement", "mean ms", "p50 ms", "samples", "÷ direct SDK call"],
      [
        row(DIRECT, direct.mean, direct),
        row(TURN(1), one.mean, one),
        row(TURN(WIDE), wide.mean, wide),
        row(`one MCP call through the loop: (${WIDE}-call turn − 1-call turn) ÷ ${WIDE - 1}`, perCall),
        row("the same from the medians", perCallP50),
      ],
    )}\n\nGoal: one MCP call through the loop within 1.2x of a direct SDK call (measured: ${ratio(perCall, direct.mean)}; from medians ${ratio(perCallP50, direct.p50)}).\n`,
  );
});

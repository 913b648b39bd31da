// What both Agents SDK peers of bench/peers.ts share: the model (the AI SDK's OpenAI-compatible chat provider
// pointed at the benchmark's scripted upstream), the system prompt and step limit from the Worker's vars, and
// one tool equivalent to aptix's agent_hello_world (src/tools/agent-hello-world.ts): `{name}` in, the same
// greeting JSON out.
import { createOpenAI } from "@ai-sdk/openai";
import { type LanguageModel, type StopCondition, stepCountIs, type ToolSet, tool } from "ai";
import { z } from "zod";
import { countingOps, opCounts, resetOpCounts } from "../../src/observability/op-counts";

export interface PeerEnv {
  /** The scripted upstream's /v1 (bench/peers.ts sets it with --var, as for aptix). */
  LLM_BASE_URL: string;
  LLM_API_KEY: string;
  LLM_MODEL: string;
  /** aptix's enhanced system prompt, written into the run's copy of the config by bench/peers.ts. */
  SYSTEM_PROMPT: string;
  /** The loop's step limit: aptix's AGENT_MAX_ITERATIONS. */
  MAX_STEPS: string;
  /** "1": bench:ops counts the bindings' operations (src/observability/op-counts.ts), read at /bench/ops. */
  APTIX_COUNT_OPS?: string;
}

/**
 * bench:ops's counts of the peer's isolate, as aptix's GET and DELETE /admin/bench/ops answer them (no caller: the
 * peers are the benchmark's own, on loopback), when APTIX_COUNT_OPS is "1"; else null (not this route).
 */
export function benchOps(request: Request, env: PeerEnv): Response | null {
  if (!countingOps(env) || new URL(request.url).pathname !== "/bench/ops") return null;
  if (request.method === "DELETE") {
    resetOpCounts();
    return new Response(null, { status: 204 });
  }
  return Response.json({ counts: opCounts() });
}

export function peerModel(env: PeerEnv): LanguageModel {
  return createOpenAI({ baseURL: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY }).chat(env.LLM_MODEL);
}

export function peerStopWhen(env: PeerEnv): StopCondition<ToolSet> {
  return stepCountIs(Number(env.MAX_STEPS) || 10);
}

/** agent_hello_world with aptix's name, description, argument schema and result. */
export function peerTools(sessionId: string) {
  return {
    agent_hello_world: tool({
      description: "Creates a friendly greeting using the user's name.",
      inputSchema: z.object({ name: z.string().min(1).describe("The name of the person to greet.") }),
      execute: async ({ name }: { name: string }) => ({
        message: `Hello, ${name.trim()}! Welcome to Aptix.`,
        conversationId: sessionId,
        sessionId,
      }),
    }),
  } satisfies ToolSet;
}

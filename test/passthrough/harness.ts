// The passthrough seen by its real clients: the official `openai` SDK (and raw fetch) calling the Worker
// inside the test runtime, each test with an API key of its own so the per-key rate limit counts it alone.

import { waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import OpenAI from "openai";
import { createApp } from "../../src/app";
import { hashApiKey } from "../../src/auth/api-keys";
import type { WorkersAiBinding } from "../../src/llm/workers-ai";
import { trackedExecutionContext } from "../setup/pending-work";

export const BASE_URL = "http://localhost/v1";

export interface TestKey {
  key: string;
  keyId: string;
  org: string;
}

/** A fresh chat-scoped key in `org`, stored hashed like a real one. */
export async function newChatKey(org = "org-a", scopes: string[] = ["chat"]): Promise<TestKey> {
  const keyId = `passthrough-${crypto.randomUUID()}`;
  const key = `sk-aptix-test-${crypto.randomUUID()}`;
  await env.DB.prepare("INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(keyId, await hashApiKey(key), keyId, org, "tester", JSON.stringify(scopes))
    .run();
  return { key, keyId, org };
}

/** A chat key of a user of its own (a session list is per user), in `org`. */
export async function newUserKey(org = "org-a"): Promise<TestKey> {
  const key = await newChatKey(org);
  await env.DB.prepare("UPDATE api_keys SET user_id = ? WHERE id = ?")
    .bind(`user-${crypto.randomUUID()}`, key.keyId)
    .run();
  return key;
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface TestWorker {
  fetch: Fetch;
  /** Resolves when the work the Worker left running after its responses (waitUntil) has finished. */
  settled(): Promise<void>;
}

/** Vars and bindings to change for one worker: short timeouts, another upstream, a broken binding. */
/**
 * The vars a test Worker runs with; its AI binding may be a stand-in that answers only `run` (the one method the
 * Workers AI route calls), which the runtime's full `Ai` type does not take.
 */
export type PassthroughVars = Partial<Omit<Cloudflare.Env, "AI">> & { AI?: WorkersAiBinding };

/** The deployed Worker's own entry point, with the vars of wrangler.toml and vitest.config.ts. */
export const worker: TestWorker = {
  fetch: (input, init) => exports.default.fetch(input, init),
  settled: async () => {},
};

/** The same app with some vars changed (short timeouts), whose waitUntil work a test can wait for. */
export function workerWith(vars: PassthroughVars = {}): TestWorker {
  const app = createApp();
  // The app reads the AI binding only through aiBinding(), as a WorkersAiBinding.
  const testEnv = { ...env, ...vars } as Cloudflare.Env;
  const contexts: ExecutionContext[] = [];
  return {
    fetch: async (input, init) => {
      const ctx = trackedExecutionContext();
      contexts.push(ctx);
      return app.fetch(new Request(input, init), testEnv, ctx);
    },
    settled: async () => {
      await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    },
  };
}

export function openai(key: TestKey | string, through: TestWorker = worker): OpenAI {
  return new OpenAI({
    apiKey: typeof key === "string" ? key : key.key,
    baseURL: BASE_URL,
    maxRetries: 0,
    fetch: (input, init) => through.fetch(input, init),
  });
}

/** A raw POST of `body` (a string is sent as it is, byte for byte). */
export function post(
  path: string,
  key: TestKey,
  body: unknown,
  headers: Record<string, string> = {},
  through: TestWorker = worker,
): Promise<Response> {
  return through.fetch(`${BASE_URL}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The events of an SSE body, each the text between blank lines. */
export function sseEvents(text: string): string[] {
  return text.split("\n\n").filter((event) => event.length > 0);
}

export interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

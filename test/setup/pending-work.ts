// The work a Worker leaves running after its reply (ctx.waitUntil) when a test calls the app with an execution
// context of its own. The runtime waits for the waitUntil work of its own entry point (exports.default) but not
// for these contexts: left alone, a file's last request could still be writing (usage rows, a last-seen time, a
// Durable Object's first import) when the file ends and the runtime is closed under it. The setup file waits for
// all of them after each test.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";

const open = new Set<ExecutionContext>();

/** An execution context whose waitUntil work is waited for after the test that made it. */
export function trackedExecutionContext(): ExecutionContext {
  const ctx = createExecutionContext();
  open.add(ctx);
  return ctx;
}

/** Resolves when the waitUntil work of every context made so far has finished. */
export async function settlePendingWork(): Promise<void> {
  const contexts = [...open];
  open.clear();
  await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
}

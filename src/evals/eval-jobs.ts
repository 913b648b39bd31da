// Server-side eval runs (POST /admin/evals): the request stores the run `queued` and sends its id to the eval queue;
// this consumer takes it (once, however often the queue delivers it), runs the dataset through the same runner the
// CLI uses, over the Worker's own app (each case a real turn in a session object, metered as `eval`), and stores the
// results. A queue consumer may work for minutes, which a request's waitUntil may not.
//
// The runner speaks HTTP with a key, as the CLI does: the run gets a key of its own for its length, with the scopes
// of the admin who asked (chat and admin, in their org, as their user), expiring on its own should the consumer
// stop, and deleted when the run ends. It is stored hashed, as every key is, and never leaves this module.
import { z } from "zod";
import { deleteApiKey, hashApiKey, insertKeyStatement } from "../auth/api-keys";
import { JsonAdminLogger } from "../observability/admin-logger";
import { randomToken } from "../secret-text";
import type { Fetch } from "./eval-http";
import { claimRun, datasetCases, finishRun, getRun } from "./eval-store";
import { type EvalResults, EvalSetupError, runEval } from "./runner";

export const EvalRunMessage = z.object({ kind: z.literal("eval_run"), runId: z.string() });
export type EvalRunMessage = z.infer<typeof EvalRunMessage>;

/** How long a run's own key lives at most (a queue consumer's wall time is 15 minutes). */
const RUN_KEY_TTL_MS = 20 * 60_000;
/** Cases run at once on the server: a session object each, so a few at a time stay cheap. */
const SERVER_CONCURRENCY = 4;
/** The origin the run's requests name; they never leave the Worker (its own app answers them). */
const SELF_ORIGIN = "https://aptix.internal";

export async function consumeEvalRuns(batch: MessageBatch<unknown>, env: Cloudflare.Env, app: Fetch): Promise<void> {
  const logger = new JsonAdminLogger({ queue: batch.queue });
  for (const message of batch.messages) {
    const parsed = EvalRunMessage.safeParse(message.body);
    if (!parsed.success) {
      // Nothing to run, nor to retry: a message of another shape is dropped, and said so.
      logger.addCustomEvent("Warning", "[Eval_Run]", "A message that is not an eval run was dropped.", []);
      message.ack();
      continue;
    }
    await runQueuedEval(env, app, parsed.data.runId, logger);
    message.ack();
  }
}

/** Runs one queued run to its end; a run another delivery took already is left alone. */
export async function runQueuedEval(env: Cloudflare.Env, app: Fetch, runId: string, logger: JsonAdminLogger) {
  const claimed = await claimRun(env.DB, runId);
  if (!claimed) return;
  const run = await getRun(env.DB, claimed.org, runId);
  if (!run) return;
  const keyId = `eval-run-${runId}`;
  const key = randomToken("ak_eval_");
  try {
    const cases = await datasetCases(env.DB, claimed.org, run.dataset);
    if (!cases) {
      await finishRun(env.DB, runId, { error: `The dataset "${run.dataset}" was deleted before the run started.` });
      return;
    }
    await insertKeyStatement(env.DB, {
      id: keyId,
      keyHash: await hashApiKey(key),
      name: `eval run ${runId}`,
      org: claimed.org,
      user: claimed.createdBy,
      scopes: ["chat", "admin"],
      expiresAt: new Date(Date.now() + RUN_KEY_TTL_MS).toISOString(),
    }).run();
    const target = { baseUrl: SELF_ORIGIN, key, fetch: app };
    const results: EvalResults[] = [];
    for (const version of run.compare === null ? [run.version] : [run.version, run.compare]) {
      results.push(
        await runEval({
          mode: run.mode,
          ...(version === null ? {} : { version }),
          cases,
          target,
          concurrency: SERVER_CONCURRENCY,
        }),
      );
    }
    await finishRun(env.DB, runId, { results });
  } catch (error) {
    if (error instanceof EvalSetupError) {
      await finishRun(env.DB, runId, { error: error.message });
    } else {
      // Logged with its stack; the run says only that it failed (nothing internal is relayed).
      logger.addException("[Eval_Run]", error);
      await finishRun(env.DB, runId, { error: "The run failed unexpectedly; the server's log has the details." });
    }
  } finally {
    await deleteApiKey(env.DB, claimed.org, keyId);
  }
}

// Worker entry: the Hono app behind its OAuth provider (src/auth/oauth.ts: the authorization server of /mcp), the
// hourly cron's retention run (src/session/retention.ts; and the idempotency keys past their window), the webhook
// queue's consumer (src/webhooks/consumer.ts), the eval queue's (src/evals/eval-jobs.ts), and the Durable Object
// classes (a session each, a meter per org, a runner per schedule).
import { createApp } from "./app";
import { withOAuth } from "./auth/oauth";
import { consumeEvalRuns } from "./evals/eval-jobs";
import { deleteExpiredKeys } from "./jobs/idempotency-store";
import { JsonAdminLogger } from "./observability/admin-logger";
import { countedEnv } from "./observability/op-counts";
import { expireIdleSessions } from "./session/retention";
import { consumeWebhooks } from "./webhooks/consumer";

export { ScheduleRunner } from "./jobs/schedule-runner";
export { OrgMeter } from "./metering/org-meter";
export { AgentSession } from "./session/agent-session";

const app = withOAuth(createApp());

// Each entry passes its env through countedEnv: npm run bench:ops's counting bindings when the bench asks for them
// (src/observability/op-counts.ts), else the env itself.
export default {
  fetch: (request, env, ctx) => app.fetch(request, countedEnv(env), ctx),
  scheduled(controller, workerEnv, ctx) {
    const env = countedEnv(workerEnv);
    const logger = new JsonAdminLogger({ cron: controller.cron });
    const run = expireIdleSessions(env, controller.scheduledTime).then(
      ({ deleted, kept }) => {
        if (deleted + kept === 0) return;
        logger.addCustomEvent("Message", "[Session_Retention]", "Idle sessions were deleted.", [
          ["Deleted", String(deleted)],
          ["Kept", String(kept)],
        ]);
      },
      (error: unknown) => logger.addException("[Session_Retention]", error),
    );
    ctx.waitUntil(run);
    ctx.waitUntil(
      deleteExpiredKeys(env.DB, controller.scheduledTime).catch((error: unknown) =>
        logger.addException("[Idempotency_Retention]", error),
      ),
    );
  },
  // The eval queue's runs go through the app itself (src/evals/eval-jobs.ts); every other queue is the webhooks'.
  queue: (batch, workerEnv, ctx) => {
    const env = countedEnv(workerEnv);
    return batch.queue.startsWith("aptix-evals")
      ? consumeEvalRuns(batch, env, async (input, init) => app.fetch(new Request(input, init), env, ctx))
      : consumeWebhooks(batch, env);
  },
} satisfies ExportedHandler<Cloudflare.Env>;

// The webhook queue's consumer (the Worker's `queue` handler). An event's message is fanned out here, off every
// request's path: the endpoints that subscribe to it are read from D1, a delivery is recorded for each, and each is
// POSTed, signed. A delivery that fails (not a 2xx, no answer, no answer in WEBHOOK_TIMEOUT_MS) is tried again with
// backoff through message.retry({delaySeconds}) until it succeeds or its retry window (WEBHOOK_RETRY_WINDOW_MS, a
// day) ends; then it is abandoned and its endpoint disabled, with why, for its admins to see. At least once: a
// receiver may get a delivery twice, and dedupes by its `webhook-id`.
import type { AdminLogger } from "../observability/admin-logger";
import { JsonAdminLogger } from "../observability/admin-logger";
import { settings } from "../settings";
import { secretBoxOf } from "../tenancy/org-secrets";
import { a2aPushHeaders, a2aPushPayload } from "./a2a-push-payload";
import { type Delivery, deliveryIdOf, WebhookDeliveries } from "./delivery-store";
import { type StoredEndpoint, secretName, WebhookEndpoints } from "./endpoint-store";
import { type QueuedEvent, WebhookMessage } from "./queue-message";
import { signedHeaders } from "./signing";
import { webhookUrlProblem } from "./webhook-url";

/**
 * Seconds before each retry (after the first failure, the second, ...; the last repeats), as Standard Webhooks'
 * reference schedule: quick retries for a blip, hours apart for an outage. Each is under Queues' 12-hour maximum
 * delay; the retry window, not this list, ends a delivery (the last retry falls at its end).
 */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000] as const;

/** A message whose handling failed unexpectedly (D1 unreachable) comes back after this long. */
const UNEXPECTED_RETRY_SECONDS = 60;

/** The longest error text an attempt records. */
const MAX_ERROR_CHARS = 300;

export interface ConsumeOptions {
  /** The clock (tests pass a later one to reach the end of a retry window). */
  now?: () => number;
  logger?: AdminLogger;
}

interface Run {
  env: Cloudflare.Env;
  now: () => number;
  logger: AdminLogger;
  endpoints: WebhookEndpoints;
  deliveries: WebhookDeliveries;
}

/** Handles one batch: each message is acknowledged, or retried when one of its deliveries is to be tried again. */
export async function consumeWebhooks(
  batch: MessageBatch<unknown>,
  env: Cloudflare.Env,
  options: ConsumeOptions = {},
): Promise<void> {
  const run: Run = {
    env,
    now: options.now ?? Date.now,
    logger: options.logger ?? new JsonAdminLogger({ queue: batch.queue }),
    endpoints: new WebhookEndpoints(env.DB),
    deliveries: new WebhookDeliveries(env.DB),
  };
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = WebhookMessage.safeParse(message.body);
      if (!parsed.success) {
        run.logger.addError("[webhooks_consume]", "A queue message that is no webhook message was dropped.", [
          ["message", message.id],
        ]);
        message.ack();
        return;
      }
      try {
        const body = parsed.data;
        const retryIn = body.kind === "event" ? await fanOut(run, body) : await redeliver(run, body.deliveryId);
        if (retryIn === null) message.ack();
        else message.retry({ delaySeconds: retryIn });
      } catch (error) {
        run.logger.addException("[webhooks_consume]", error, [["message", message.id]]);
        message.retry({ delaySeconds: UNEXPECTED_RETRY_SECONDS });
      }
    }),
  );
}

/** The earliest of the retries asked for, or null when none is. */
function earliest(delays: readonly (number | null)[]): number | null {
  const wanted = delays.filter((d): d is number => d !== null);
  return wanted.length === 0 ? null : Math.min(...wanted);
}

/**
 * Records a delivery of the event for each endpoint that hears of it (the same ones however often the message
 * comes), then tries each delivery that is due.
 */
async function fanOut(run: Run, queued: QueuedEvent): Promise<number | null> {
  const { event } = queued;
  const targets: StoredEndpoint[] = [];
  if (queued.only !== undefined) {
    const only = await run.endpoints.byId(queued.only);
    if (only && only.org === event.org && only.enabled) targets.push(only);
  } else {
    // An A2A push notification config hears of its own task's turn only.
    const subscribers = await run.endpoints.subscribers(event.org, event.user, event.type, queued.at);
    targets.push(...subscribers.filter((endpoint) => !endpoint.a2a || endpoint.a2a.taskId === event.data.turnId));
  }
  const payload = JSON.stringify({ type: event.type, timestamp: queued.at, data: event.data });
  const created = await Promise.all(
    targets.map(async (endpoint) => ({
      id: await deliveryIdOf(queued.id, endpoint.id),
      endpointId: endpoint.id,
      eventId: queued.id,
      type: event.type,
      payload: endpoint.a2a ? a2aPushPayload(queued) : payload,
    })),
  );
  await run.deliveries.create(created, new Date(run.now()).toISOString());
  const pending = await run.deliveries.pendingOf(queued.id);
  return earliest(await Promise.all(pending.map((delivery) => attemptIfDue(run, delivery))));
}

/** A delivery retried by hand (or by its own message): tried again if still pending. */
async function redeliver(run: Run, deliveryId: string): Promise<number | null> {
  const delivery = await run.deliveries.get(deliveryId);
  if (delivery?.status !== "pending") return null;
  return attemptIfDue(run, delivery);
}

/** Tries `delivery` if it is due; the seconds until it is to be tried (again), or null when it is done. */
async function attemptIfDue(run: Run, delivery: Delivery): Promise<number | null> {
  const now = run.now();
  if (delivery.nextAttemptAt !== null) {
    const dueIn = Date.parse(delivery.nextAttemptAt) - now;
    // A message back a little early (Queues' delays are not to the millisecond) is on time.
    if (dueIn > 1_000) return Math.ceil(dueIn / 1_000);
  }
  const endpoint = await run.endpoints.byId(delivery.endpointId);
  if (!endpoint?.enabled) {
    await run.deliveries.abandon(delivery.id);
    return null;
  }
  return attempt(run, delivery, endpoint);
}

/** What one POST came to: a status code (any), or none and why. */
interface Sent {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

async function post(run: Run, delivery: Delivery, endpoint: StoredEndpoint, timeoutMs: number): Promise<Sent> {
  const box = await secretBoxOf(run.env);
  if (!box) throw new Error("SECRETS_KEY is not set: webhook deliveries cannot be signed.");
  const secret = await box.open(endpoint.org, secretName(endpoint.id), endpoint.sealed);
  const headers = {
    "content-type": "application/json",
    "user-agent": "aptix-webhooks",
    // Signed at the real time of the POST (receivers refuse a timestamp off by minutes), whatever clock schedules it.
    ...signedHeaders(secret, delivery.id, new Date(), delivery.payload),
    ...(endpoint.a2a ? await a2aPushHeaders(box, endpoint.org, endpoint.id, endpoint.a2a.token) : {}),
  };
  const started = Date.now();
  try {
    const response = await fetch(endpoint.url, {
      method: "POST",
      headers,
      body: delivery.payload,
      // A redirect is an answer (not a 2xx): following it could lead anywhere, a private address included.
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    const ok = response.status >= 200 && response.status < 300;
    return {
      statusCode: response.status,
      error: ok ? null : `The endpoint answered ${response.status}.`,
      durationMs: Date.now() - started,
    };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const why = timedOut
      ? `No answer within ${timeoutMs} ms.`
      : `The endpoint could not be reached (${error instanceof Error ? error.message : String(error)}).`;
    return { statusCode: null, error: why.slice(0, MAX_ERROR_CHARS), durationMs: Date.now() - started };
  }
}

/** One attempt of `delivery`, recorded; the seconds until the next, or null when the delivery is done. */
async function attempt(run: Run, delivery: Delivery, endpoint: StoredEndpoint): Promise<number | null> {
  const config = settings(run.env).webhooks;
  const at = new Date(run.now()).toISOString();
  const refused = webhookUrlProblem(endpoint.url, config.allowHttpLoopback);
  if (refused) {
    // Never sent: the URL is one these settings refuse (stored under development settings, or a private address).
    const error = `Not sent: the endpoint's URL is refused (${refused})`;
    await run.deliveries.recordAttempt(delivery, {
      at,
      statusCode: null,
      error,
      durationMs: 0,
      status: "abandoned",
      nextAttemptAt: null,
    });
    await run.endpoints.disable(endpoint.id, error, at);
    run.logger.addError("[webhooks_deliver]", "A webhook endpoint's URL is refused; it was disabled.", [
      ["endpoint", endpoint.id],
    ]);
    return null;
  }
  const sent = await post(run, delivery, endpoint, config.timeoutMs);
  if (sent.error === null) {
    await run.deliveries.recordAttempt(delivery, { at, ...sent, status: "delivered", nextAttemptAt: null });
    return null;
  }
  run.logger.addCustomEvent("Warning", "[webhooks_deliver]", "A webhook delivery failed.", [
    ["endpoint", endpoint.id],
    ["delivery", delivery.id],
    ["error", sent.error],
  ]);
  const now = run.now();
  const windowEnd = Date.parse(delivery.windowStartedAt) + config.retryWindowMs;
  if (now >= windowEnd) {
    await run.deliveries.recordAttempt(delivery, { at, ...sent, status: "abandoned", nextAttemptAt: null });
    const hours = Math.round(config.retryWindowMs / 3_600_000);
    const attempts = delivery.attempts + 1;
    const window = hours === 0 ? `${config.retryWindowMs} ms` : `${hours} hours`;
    await run.endpoints.disable(
      endpoint.id,
      `Deliveries failed for ${window} (${attempts} attempt${attempts === 1 ? "" : "s"}). The last: ${sent.error}`,
      at,
    );
    return null;
  }
  const scheduled = RETRY_SCHEDULE_SECONDS[Math.min(delivery.attempts, RETRY_SCHEDULE_SECONDS.length - 1)] ?? 5;
  const delay = Math.max(1, Math.min(scheduled, Math.ceil((windowEnd - now) / 1_000)));
  await run.deliveries.recordAttempt(delivery, {
    at,
    ...sent,
    status: "pending",
    nextAttemptAt: new Date(now + delay * 1_000).toISOString(),
  });
  return delay;
}

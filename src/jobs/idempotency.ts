// `Idempotency-Key` (the IETF httpapi draft's header) on the POSTs that start work: the same key with the same
// request (method, path and body) within the window answers the first request's answer again (`Idempotent-Replayed:
// true`), with no second turn and no second model call; another body gets 422 `idempotency_key_reused`, and a
// request while the first is still running 409 `idempotency_key_in_flight`. Keys are per org and per caller (user
// and API key). Only an answer that did something (2xx) is kept: a refusal or a failure changed nothing, so the key
// is given back and a retry runs. A worker that dies mid-request frees the key when its lease expires. A streamed
// answer (SSE) is kept whole as it is sent, and replayed whole at once. Requests without the header touch nothing.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors";
import type { AppBindings } from "../http";
import { settings } from "../settings";
import { type Claim, IdempotencyStore, type KeyScope, type StoredAnswer } from "./idempotency-store";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** The longest key taken (the draft leaves it to the server; Stripe's limit). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;
/** The largest answer kept to replay; a larger one holds the key but is not replayed (idempotency_answer_not_kept). */
export const MAX_KEPT_ANSWER_BYTES = 1_000_000;
/** How long past the agent's turn timeout a first request may run before its key is taken to be abandoned. */
const LEASE_MARGIN_MS = 60_000;

/** The POSTs that start work, by path (schedules and webhooks are covered as their routes land). */
const IDEMPOTENT_POSTS: readonly RegExp[] = [
  /^\/context\/sessions$/,
  /^\/context\/sessions\/[^/]+\/(messages|approvals|tool-results|branches)$/,
  /^\/context\/sessions\/[^/]+\/workflows\/[^/]+$/,
  /^\/agent\/v1\/(chat\/completions|responses|messages)$/,
  /^\/context\/schedules$/,
  /^\/context\/schedules\/[^/]+\/run$/,
  /^\/context\/webhooks$/,
  /^\/context\/webhooks\/[^/]+\/test$/,
];

/** The headers of an answer a replay carries again (the rest belong to the request that is answered now). */
const REPLAYED_HEADERS = ["content-type", "location", "preference-applied", "retry-after", "cache-control"];

/** Whether `path` is a POST that takes an Idempotency-Key. */
export function takesIdempotencyKey(method: string, path: string): boolean {
  return method === "POST" && IDEMPOTENT_POSTS.some((pattern) => pattern.test(path));
}

/**
 * The key as sent: a Structured Fields string (`"..."`, as the draft writes it) or the bare text most clients send;
 * empty or longer than 255 characters is refused, naming the header.
 */
export function parseIdempotencyKey(header: string): string {
  let key = header.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1).replace(/\\(["\\])/g, "$1");
  if (key === "") {
    throw new ApiError("invalid_idempotency_key", `${IDEMPOTENCY_HEADER} must not be empty.`, {
      param: IDEMPOTENCY_HEADER,
    });
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_CHARS) {
    throw new ApiError(
      "invalid_idempotency_key",
      `${IDEMPOTENCY_HEADER} has ${key.length} characters; the limit is ${MAX_IDEMPOTENCY_KEY_CHARS}.`,
      { param: IDEMPOTENCY_HEADER },
    );
  }
  return key;
}

/** SHA-256 of the method, the path with its query, and the body's bytes. */
export async function requestHash(method: string, url: string, body: ArrayBuffer): Promise<string> {
  const { pathname, search } = new URL(url);
  const head = new TextEncoder().encode(`${method}\n${pathname}${search}\n`);
  const bytes = new Uint8Array(head.length + body.byteLength);
  bytes.set(head);
  bytes.set(new Uint8Array(body), head.length);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

export const idempotency = createMiddleware<AppBindings>(async (c, next) => {
  const header = c.req.header(IDEMPOTENCY_HEADER);
  if (header === undefined || !takesIdempotencyKey(c.req.method, c.req.path)) return next();
  const { org, user, keyId } = c.get("principal");
  const scope: KeyScope = { org, user, keyId, key: parseIdempotencyKey(header) };
  // Read through Hono's body cache: the route's validator reads the same bytes again without a second read.
  const hash = await requestHash(c.req.method, c.req.url, await c.req.arrayBuffer());
  const config = settings(c.env);
  const store = new IdempotencyStore(c.env.DB, config.secrets);
  const times = {
    now: Date.now(),
    leaseMs: config.agent.turnTimeoutMs + LEASE_MARGIN_MS,
    windowMs: config.idempotency.windowMs,
  };
  const claim = await store.claim(scope, hash, times);
  if (claim.kind !== "claimed") return answerFor(claim);
  try {
    await next();
  } catch (error) {
    await store.release(scope, claim.claim);
    throw error;
  }
  await keep(c, store, scope, claim.claim);
});

/** What a request finds when the key is not its own: the first answer again, or why not. */
function answerFor(claim: Exclude<Claim, { kind: "claimed" }>): Response {
  switch (claim.kind) {
    case "reused":
      throw new ApiError(
        "idempotency_key_reused",
        `This ${IDEMPOTENCY_HEADER} was sent with another request (method, path or body) within its window; send a new key for a new request.`,
        { param: IDEMPOTENCY_HEADER },
      );
    case "in_flight":
      throw new ApiError(
        "idempotency_key_in_flight",
        `The first request with this ${IDEMPOTENCY_HEADER} is still being answered; try again when it is.`,
        { param: IDEMPOTENCY_HEADER, headers: { "retry-after": "1" } },
      );
    case "done":
      return replay(claim.answer);
  }
}

function replay(answer: StoredAnswer): Response {
  if (answer.tooLarge) {
    throw new ApiError(
      "idempotency_answer_not_kept",
      `The first request with this ${IDEMPOTENCY_HEADER} was answered, but its answer (over ${MAX_KEPT_ANSWER_BYTES} bytes) is not kept to replay; read what it made (the session, its turn) instead.`,
      { param: IDEMPOTENCY_HEADER },
    );
  }
  return new Response(answer.body, {
    status: answer.status,
    headers: { ...answer.headers, "idempotent-replayed": "true" },
  });
}

/**
 * Keeps a 2xx answer for the window (a stream as it is sent, in the request's waitUntil), and gives the key back on
 * any other: a refusal changed nothing, and a failure should be retried.
 */
async function keep(c: Context<AppBindings>, store: IdempotencyStore, scope: KeyScope, claim: string): Promise<void> {
  const response = c.res;
  if (response.status < 200 || response.status > 299) {
    await store.release(scope, claim);
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const answer = (body: string | null): StoredAnswer =>
    body === null
      ? { status: response.status, headers, body: "", tooLarge: true }
      : { status: response.status, headers, body };
  if (!response.headers.get("content-type")?.includes("text/event-stream") || !response.body) {
    await store.complete(scope, claim, answer(await cappedText(response.clone().body)));
    return;
  }
  const [sent, kept] = response.body.tee();
  c.res = new Response(sent, response);
  c.executionCtx.waitUntil(
    cappedText(kept)
      .then((body) => store.complete(scope, claim, answer(body)))
      .catch((error: unknown) => {
        c.get("logger").addException("[Idempotency_Keep__Exception]", error);
        return store.release(scope, claim);
      }),
  );
}

/** The body's text, or null past MAX_KEPT_ANSWER_BYTES (read to its end either way, so a stream is not held up). */
async function cappedText(body: ReadableStream<Uint8Array> | null): Promise<string | null> {
  if (!body) return "";
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes <= MAX_KEPT_ANSWER_BYTES) text += decoder.decode(value, { stream: true });
  }
  return bytes <= MAX_KEPT_ANSWER_BYTES ? text + decoder.decode() : null;
}

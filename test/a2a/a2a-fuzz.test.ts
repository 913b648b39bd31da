// The A2A doors take any input: generated requests (junk JSON, JSON-RPC envelopes with unknown methods and odd
// params, odd paths and task ids, unicode and over-long text) thrown at the public card, /a2a/jsonrpc and
// /a2a/rest/* through the Worker's entry, with a key and without, are each answered below 500, with no stack text.
import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { ORIGIN } from "./fixtures";

/** Runs per door: enough to reach each branch the generators aim at, few enough for the file to stay fast. */
const RUNS = 25;

/** A line of a stack trace, or a source file reference as a stack or an error's text names one. */
const STACK_TEXT = /^\s+at\s|\.(?:[cm]?[jt]s):/m;

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

async function keepsItsShape(sent: Sent): Promise<void> {
  fc.pre(![sent.path, sent.body ?? ""].some((text) => STACK_TEXT.test(text)));
  const response = await exports.default.fetch(`${ORIGIN}${sent.path}`, {
    method: sent.method,
    headers: sent.headers,
    ...(sent.body !== undefined && sent.method !== "GET" ? { body: sent.body } : {}),
  });
  const text = await response.text();
  const shown = `${sent.method} ${sent.path.slice(0, 200)} -> ${response.status}: ${text.slice(0, 600)}`;
  expect(response.status, shown).toBeLessThan(500);
  expect(STACK_TEXT.test(text), shown).toBe(false);
}

const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 200 }),
  fc.constantFrom("", "%", ":", "::cancel", "x:subscribe", "\u0000", "a".repeat(5_000)),
);

const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  anyText,
  fc.constantFrom("{", "[]", "null", '{"jsonrpc":"2.0"}'),
);

const METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "GetExtendedAgentCard",
  "CreateTaskPushNotificationConfig",
  "message/send",
];

const params = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record({ id: anyText }),
  fc.record({
    message: fc.record({ messageId: anyText, parts: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }) }),
  }),
  fc.record({ pageSize: fc.oneof(fc.integer(), fc.double(), anyText), pageToken: anyText, status: anyText }),
);

const envelope = fc
  .record({
    id: fc.oneof(fc.integer(), anyText, fc.constant(null)),
    method: fc.oneof(fc.constantFrom(...METHODS), anyText),
    params,
  })
  .map((rpc) => JSON.stringify({ jsonrpc: "2.0", ...rpc }));

const withKey = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${TEST_KEYS.chat.key}`,
  "a2a-version": "1.0",
  "content-type": "application/json",
  ...extra,
});

describe("the A2A doors with generated input", () => {
  it("GET /.well-known/agent-card.json answers below 500, without stack text, to anyone", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom("q", "tenant", "x"), anyText),
        fc.boolean(),
        async (query, keyed) => {
          const search = new URLSearchParams(query).toString();
          await keepsItsShape({
            method: "GET",
            path: `/.well-known/agent-card.json${search ? `?${search}` : ""}`,
            headers: keyed ? withKey() : {},
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /a2a/jsonrpc answers below 500, without stack text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(envelope, anyJson), fc.constantFrom("1.0", "0.3", ""), async (body, version) => {
        await keepsItsShape({
          method: "POST",
          path: "/a2a/jsonrpc",
          headers: withKey({ "a2a-version": version }),
          body,
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("/a2a/rest/* answers below 500, without stack text", async () => {
    const paths = fc.oneof(
      fc.constantFrom("/message:send", "/message:stream", "/tasks", "/extendedAgentCard", "/message:other"),
      anyText.map((ref) => `/tasks/${encodeURIComponent(ref)}`),
      anyText.map((ref) => `/tasks/${encodeURIComponent(ref)}:cancel`),
      anyText.map((ref) => `/tasks/${encodeURIComponent(ref)}/pushNotificationConfigs`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "DELETE", "PUT"),
        paths,
        anyJson,
        fc.constantFrom("application/json", "text/plain", "application/a2a+json"),
        async (method, path, body, type) => {
          await keepsItsShape({ method, path: `/a2a/rest${path}`, headers: withKey({ "content-type": type }), body });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("the A2A endpoints answer a caller without a key 401, below 500 whatever is sent", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/a2a/jsonrpc", "/a2a/rest/message:send", "/a2a/rest/tasks"),
        anyJson,
        async (path, body) => {
          const response = await exports.default.fetch(`${ORIGIN}${path}`, { method: "POST", body });
          await response.text();
          expect(response.status).toBe(401);
        },
      ),
      { numRuns: 10 },
    );
  });
});

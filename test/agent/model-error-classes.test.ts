// Each cause an upstream's error stands for reaches the turn with its own code, its text and the upstream's
// Retry-After: every class, on an OpenAI-compatible and an Anthropic route, over HTTP, SSE and the WebSocket
// (docs/errors.md). One session per route and door, taking one turn per class; the upstreams answer as the real
// providers do, in their own bodies.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { TurnError } from "../../src/wire/turn";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptAnthropic, scriptUpstream, type UpstreamScript } from "../fixtures/upstream";
import { modeOnRoute, putRoute, toUpstreamA } from "../routing/fixtures";
import {
  type AnthropicScriptStep,
  anthropicModelNotFound,
  anthropicPromptTooLong,
  openAIContextLengthExceeded,
  openAIModelNotFound,
  type ScriptStep,
} from "../upstream/script-types";

const OPENAI_KEY = env.UPSTREAM_A_KEY ?? "";

/** What a class's turn must end with: the code, its text (naming the route and model where it does) and Retry-After. */
interface Expected {
  code: string;
  message: string | RegExp | ((route: { name: string; model: string }) => string);
  retryAfterSeconds?: number;
}

interface ClassCase {
  openai: ScriptStep[];
  anthropic: AnthropicScriptStep[];
  expected: Expected;
}

/** A failure the model retries in place (429, 5xx): the same answer for the call and its two retries. */
const thrice = <T>(step: T): T[] => [step, step, step];

/** The last of three 429s asks for 7 seconds; the first two for none, so the test does not wait. */
function limited<T>(make: (seconds: string) => T): T[] {
  return [make("0"), make("0"), make("7")];
}

const CLASSES: Record<string, ClassCase> = {
  model_not_found: {
    openai: [{ type: "error", status: 404, body: openAIModelNotFound("model-a") }],
    anthropic: [{ type: "error", status: 404, error: anthropicModelNotFound("claude-test") }],
    expected: {
      code: "model_not_found",
      message: ({ name, model }) =>
        `The model service of model route '${name}' does not know the model '${model}'; the operator must set the route's model to one the service lists.`,
    },
  },
  model_auth_failed: {
    openai: [
      {
        type: "error",
        status: 401,
        body: {
          error: {
            message: "Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com.",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        },
      },
    ],
    anthropic: [{ type: "error", status: 401, error: { type: "authentication_error", message: "invalid x-api-key" } }],
    expected: {
      code: "model_auth_failed",
      message: "The model service refused this server's credentials; the operator must check its API key.",
    },
  },
  context_length_exceeded: {
    openai: [{ type: "error", status: 400, body: openAIContextLengthExceeded(8192, 9100) }],
    anthropic: [{ type: "error", status: 400, error: anthropicPromptTooLong(210_000, 200_000) }],
    expected: {
      code: "context_length_exceeded",
      message: "The conversation is too long for the model's context; start a new session, or shorten the message.",
    },
  },
  model_rate_limited: {
    openai: limited((seconds) => ({
      type: "error" as const,
      status: 429,
      body: {
        error: {
          message: "Rate limit reached for requests. Please try again in 7s.",
          type: "requests",
          param: null,
          code: "rate_limit_exceeded",
        },
      },
      headers: { "retry-after": seconds },
    })),
    anthropic: limited((seconds) => ({
      type: "error" as const,
      status: 429,
      error: { type: "rate_limit_error" as const, message: "Number of request tokens has exceeded your rate limit." },
      retryAfter: Number(seconds),
    })),
    expected: {
      code: "model_rate_limited",
      message: "The model service is rate limiting this server; try again in a minute.",
      retryAfterSeconds: 7,
    },
  },
  content_filtered: {
    openai: [{ type: "completion", content: null, finishReason: "content_filter" }],
    anthropic: [{ type: "message", content: [], stopReason: "refusal" }],
    expected: {
      code: "content_filtered",
      message:
        "The model service's content filter stopped the request or its answer; rephrase the message and try again.",
    },
  },
  model_bad_request: {
    // The upstream quotes what it was sent, our key among it: the client gets its words with the key taken out.
    openai: [
      {
        type: "error",
        status: 400,
        body: {
          error: {
            message: `Invalid 'user': '${OPENAI_KEY}' is not a string of at most 64 characters.`,
            type: "invalid_request_error",
            param: "user",
            code: "invalid_value",
          },
        },
      },
    ],
    anthropic: [
      {
        type: "error",
        status: 400,
        error: { type: "invalid_request_error", message: "messages.0.content.0.type: Field required" },
      },
    ],
    expected: {
      code: "model_bad_request",
      message:
        /^The model service refused the request: (Invalid 'user': '\[redacted\]' is not a string of at most 64 characters\.|messages\.0\.content\.0\.type: Field required)$/,
    },
  },
  model_unavailable: {
    openai: thrice({
      type: "error",
      status: 503,
      body: { error: { message: "The server is overloaded.", type: "server_error", param: null, code: null } },
      headers: { "retry-after": "0" },
    }),
    anthropic: thrice({
      type: "error",
      status: 529,
      error: { type: "overloaded_error", message: "Overloaded" },
      retryAfter: 0,
    }),
    expected: {
      code: "model_unavailable",
      message: "The model service is unavailable; try again later.",
      retryAfterSeconds: 0,
    },
  },
};

type Door = "http" | "sse" | "websocket";
const DOORS: Door[] = ["http", "sse", "websocket"];

/** What a door says of a failed turn: the turn's error, the HTTP status, the Retry-After header (HTTP only). */
interface Seen {
  status: number;
  error: TurnError | undefined;
  retryAfterHeader: string | null;
}

async function turnOver(door: Door, sessionId: string, content: string): Promise<Seen> {
  if (door === "websocket") {
    const socket = await openSocket(sessionId);
    try {
      const from = socket.frames.length;
      socket.send({ type: "user_message", content, clientMessageId: crypto.randomUUID() });
      const done = await socket.waitForType("turn_completed", from);
      const response = done.response as { error?: TurnError };
      return { status: 101, error: response.error, retryAfterHeader: null };
    } finally {
      socket.close();
    }
  }
  const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
    method: "POST",
    headers: {
      ...authHeaders(TEST_KEYS.chat.key),
      "content-type": "application/json",
      ...(door === "sse" ? { accept: "text/event-stream" } : {}),
    },
    body: JSON.stringify({ content }),
  });
  if (door === "http") {
    const turn = (await response.json()) as { error?: TurnError };
    return { status: response.status, error: turn.error, retryAfterHeader: response.headers.get("retry-after") };
  }
  const frames = (await response.text())
    .split("\n\n")
    .filter(Boolean)
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "{}") as { type?: string; response?: unknown });
  const done = frames.find((f) => f.type === "turn_completed")?.response as { error?: TurnError } | undefined;
  return { status: response.status, error: done?.error, retryAfterHeader: null };
}

interface RouteUnderTest {
  route: Promise<{ name: string; model: string }>;
  /** A session per door, in a mode on the route; made on first use and reused by every class. */
  sessions: Map<Door, Promise<string>>;
  mode: Promise<string>;
  /** The one script of the route's upstream; each class queues its steps before its turn. */
  script: Promise<UpstreamScript<ScriptStep> | UpstreamScript<AnthropicScriptStep>>;
}

function routeUnderTest(kind: "openai_compatible" | "anthropic"): RouteUnderTest {
  const route =
    kind === "anthropic"
      ? putRoute({
          provider: "anthropic",
          model: "claude-test",
          baseUrl: env.TEST_ANTHROPIC_URL,
          apiKeySecret: "TEST_ANTHROPIC_API_KEY",
        })
      : toUpstreamA();
  const model = kind === "anthropic" ? "claude-test" : "model-a";
  return {
    route: route.then((name) => ({ name, model })),
    sessions: new Map(),
    mode: route.then((name) => modeOnRoute(name)),
    script: kind === "anthropic" ? scriptAnthropic([]) : scriptUpstream([]),
  };
}

for (const kind of ["openai_compatible", "anthropic"] as const) {
  describe(`model error classes on an ${kind} route`, () => {
    const under = routeUnderTest(kind);
    const sessionOf = (door: Door) => {
      const existing = under.sessions.get(door);
      if (existing) return existing;
      const made = under.mode.then((mode) => createSession(mode));
      under.sessions.set(door, made);
      return made;
    };

    for (const door of DOORS) {
      for (const [name, { openai, anthropic, expected }] of Object.entries(CLASSES)) {
        it(`ends the turn with ${name} over ${door}`, async () => {
          const script = await under.script;
          if (kind === "anthropic") await (script as UpstreamScript<AnthropicScriptStep>).append(anthropic);
          else await (script as UpstreamScript<ScriptStep>).append(openai);
          const seen = await turnOver(door, await sessionOf(door), `hello ${script.marker}`);

          expect(seen.status).toBe(door === "websocket" ? 101 : 200);
          expect(seen.error?.code).toBe(expected.code);
          const { message } = expected;
          if (message instanceof RegExp) expect(seen.error?.message).toMatch(message);
          else expect(seen.error?.message).toBe(typeof message === "string" ? message : message(await under.route));
          expect(seen.error?.retryAfterSeconds).toBe(expected.retryAfterSeconds);
          if (door === "http") {
            const header = expected.retryAfterSeconds === undefined ? null : String(expected.retryAfterSeconds);
            expect(seen.retryAfterHeader).toBe(header);
          }
        });
      }
    }
  });
}

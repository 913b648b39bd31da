// An upstream that echoes the key it was sent (in an error body, or in its stream) never gets it to a client or a
// log line: on every wire (chat completions, Responses and Messages through the passthrough; the agent's doors and
// /context), for the Worker's LLM_API_KEY and for an org's own provider key alike.
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StreamScrubber, scrubWhole, secretRedactor } from "../../src/secret-redaction";
import { freshDatabase } from "../fixtures/database";
import { authHeaders } from "../fixtures/keys";
import { createSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { TEST_UPSTREAM_API_KEY, TEST_UPSTREAM_B_API_KEY } from "../upstream/global-setup";
import { ADMIN_A, MEMBER_A, orgRouteToUpstreamB } from "./fixtures";

beforeEach(freshDatabase);

/** Every line written to the console while a test runs (the logger's lines). */
let logged: string[] = [];
beforeEach(() => {
  logged = [];
  for (const level of ["log", "warn", "error"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(" "));
    });
  }
});
afterEach(() => vi.restoreAllMocks());

const echo = (key: string) => ({
  error: { message: `Incorrect API key provided: ${key}.`, type: "invalid_request_error", code: "bad_key" },
});

async function post(path: string, body: unknown, key = MEMBER_A): Promise<{ status: number; text: string }> {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method: "POST",
    headers: { ...authHeaders(key), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

const chat = (model: string, marker: string, stream = false) => ({
  model,
  stream,
  messages: [{ role: "user", content: `hi ${marker}` }],
});

describe("the passthrough relays no key an upstream echoes", () => {
  it("in an OpenAI-shaped error body on /v1/chat/completions (LLM_API_KEY)", async () => {
    const script = await scriptUpstream([{ type: "error", status: 500, body: echo(TEST_UPSTREAM_API_KEY) }]);
    const answer = await post("/v1/chat/completions", chat("scripted-model", script.marker));
    expect(answer.status).toBe(500);
    expect(answer.text).toContain("Incorrect API key provided: [redacted].");
    expect(answer.text).not.toContain(TEST_UPSTREAM_API_KEY);
  });

  it("in an error body on /v1/responses", async () => {
    const script = await scriptUpstream([{ type: "error", status: 400, body: echo(TEST_UPSTREAM_API_KEY) }]);
    const answer = await post("/v1/responses", { model: "scripted-model", input: `hi ${script.marker}` });
    expect(answer.status).toBe(400);
    expect(answer.text).not.toContain(TEST_UPSTREAM_API_KEY);
  });

  it("in an error body on /v1/messages (translated to chat completions), in Anthropic's shape", async () => {
    const script = await scriptUpstream([{ type: "error", status: 500, body: echo(TEST_UPSTREAM_API_KEY) }]);
    const answer = await post("/v1/messages", {
      model: "scripted-model",
      max_tokens: 20,
      messages: [{ role: "user", content: `hi ${script.marker}` }],
    });
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text)).toMatchObject({ type: "error" });
    expect(answer.text).not.toContain(TEST_UPSTREAM_API_KEY);
  });

  it("in an error event inside a stream, and in a body that is not OpenAI-shaped (the log line too)", async () => {
    const script = await scriptUpstream([
      {
        type: "sse",
        events: [
          'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}',
          `data: ${JSON.stringify(echo(TEST_UPSTREAM_API_KEY))}`,
        ],
        end: "close",
      },
      { type: "error", status: 502, body: `<html>proxy said ${TEST_UPSTREAM_API_KEY}</html>` },
    ]);
    const streamed = await post("/v1/chat/completions", chat("scripted-model", script.marker, true));
    expect(streamed.text).toContain("[redacted]");
    expect(streamed.text).not.toContain(TEST_UPSTREAM_API_KEY);
    const page = await post("/v1/chat/completions", chat("scripted-model", script.marker));
    expect(page.status).toBe(502);
    expect(logged.join("\n")).toContain("proxy said [redacted]");
    expect(`${page.text}\n${logged.join("\n")}`).not.toContain(TEST_UPSTREAM_API_KEY);
  });

  it("of an org's own provider key, on the org's route", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const script = await scriptUpstream(
      [{ type: "error", status: 500, body: echo(TEST_UPSTREAM_B_API_KEY) }],
      env.TEST_UPSTREAM_B_URL,
    );
    const answer = await post("/v1/chat/completions", chat(route, script.marker));
    expect(answer.status).toBe(500);
    expect(answer.text).not.toContain(TEST_UPSTREAM_B_API_KEY);
  });
});

describe("the agent's doors tell no key an upstream echoes", () => {
  it("on /agent/v1/chat/completions", async () => {
    const script = await scriptUpstream([{ type: "error", status: 400, body: echo(TEST_UPSTREAM_API_KEY) }]);
    const answer = await post("/agent/v1/chat/completions", chat("aptix-agent/general", script.marker));
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(`${answer.text}\n${logged.join("\n")}`).not.toContain(TEST_UPSTREAM_API_KEY);
  });

  it("on /context, whole, where the upstream's words are cut for the log (no first part of a key left)", async () => {
    const body = `${"x".repeat(488)} ${TEST_UPSTREAM_API_KEY} trailing words`;
    const script = await scriptUpstream([{ type: "error", status: 400, body }]);
    const session = await createSession(undefined, MEMBER_A);
    const answer = await post(`/context/sessions/${session}/messages`, { content: `hi ${script.marker}` });
    expect(`${answer.text}\n${logged.join("\n")}`).not.toContain(TEST_UPSTREAM_API_KEY.slice(0, 8));
  });

  it("on /context, in the turn's answer and the log", async () => {
    const script = await scriptUpstream([{ type: "error", status: 400, body: echo(TEST_UPSTREAM_API_KEY) }]);
    const session = await createSession(undefined, MEMBER_A);
    const answer = await post(`/context/sessions/${session}/messages`, { content: `hi ${script.marker}` });
    expect(`${answer.text}\n${logged.join("\n")}`).not.toContain(TEST_UPSTREAM_API_KEY);
  });
});

describe("StreamScrubber", () => {
  const KEY = "sk-0123456789abcdef";
  const bytes = (text: string) => new TextEncoder().encode(text);
  const text = (chunks: (Uint8Array | null)[]) => chunks.map((c) => (c ? new TextDecoder().decode(c) : "")).join("");

  it("replaces a key cut across two chunks, holding back only a tail that could start one", () => {
    const scrubber = new StreamScrubber([KEY]);
    const out = [scrubber.push(bytes(`data: ${KEY.slice(0, 7)}`)), scrubber.push(bytes(`${KEY.slice(7)} end`))];
    expect(text([...out, scrubber.flush()])).toBe("data: [redacted] end");
    expect(text([out[0] ?? null])).toBe("data: ");
  });

  it("passes a chunk through whole when its end starts no key, and lets a held start go at the end", () => {
    const scrubber = new StreamScrubber([KEY]);
    const whole = bytes("data: hello\n\n");
    expect(scrubber.push(whole)).toBe(whole);
    expect(text([scrubber.push(bytes("last sk-01")), scrubber.flush()])).toBe("last sk-01");
  });

  it("without keys, passes every chunk untouched", () => {
    const chunk = bytes("anything");
    expect(new StreamScrubber([]).push(chunk)).toBe(chunk);
  });

  it("holds the longest tail that starts a key, past earlier starts of its first character that do not", () => {
    const scrubber = new StreamScrubber(["s-s-key"]);
    // "s-" could start the key, and so could "s-s-k" (the longest): the held tail is the longer one.
    const sent = scrubber.push(bytes("xs-xs-s-k"));
    expect(text([sent])).toBe("xs-x");
    expect(text([scrubber.push(bytes("ey!")), scrubber.flush()])).toBe("[redacted]!");
  });
});

describe("scrubWhole", () => {
  const KEY = "sk-0123456789abcdef";
  const buffer = (text: string): ArrayBuffer => {
    const bytes = new TextEncoder().encode(text);
    const out = new ArrayBuffer(bytes.byteLength);
    new Uint8Array(out).set(bytes);
    return out;
  };

  it("replaces every spelling of a key in a whole answer, as it is and as JSON escapes it", () => {
    const quoted = 'sk-"quoted"-0123456789';
    const raw = buffer(`${JSON.stringify({ a: KEY, b: quoted })} ${quoted}`);
    expect(new TextDecoder().decode(scrubWhole(raw, [KEY, quoted]))).toBe(
      '{"a":"[redacted]","b":"[redacted]"} [redacted]',
    );
  });

  it("answers the answer's own bytes when no key is in it", () => {
    const raw = buffer('{"ok":true}');
    expect(scrubWhole(raw, [KEY])).toBe(raw);
  });
});

describe("secretRedactor", () => {
  const SECRET = "s3cr/t+value=with/slashes";

  it("takes a secret out as it is, JSON-escaped either way, and percent-encoded in a URL", () => {
    const redact = secretRedactor({}, [SECRET]);
    const text = [SECRET, SECRET.replaceAll("/", "\\/"), `https://x.example/?k=${encodeURIComponent(SECRET)}`].join(
      " ",
    );
    expect(redact(text)).toBe("[redacted] [redacted] https://x.example/?k=[redacted]");
  });

  it("takes out aptix's own formats: an API key, a WebSocket ticket, a webhook signing secret", () => {
    const redact = secretRedactor({});
    expect(redact("ak_abcdefgh1234 wst_abcdefgh1234 whsec_QUJDREVGR0g+/xyz= end")).toBe(
      "[redacted] [redacted] [redacted] end",
    );
  });
});

// The guardrails on the agent's OpenAI, Responses and Messages doors: a blocked message or answer is each door's own
// 400 error naming the guardrail (OpenAI's `guardrail_blocked`, Anthropic's `invalid_request_error`), and a message
// blocked on the way in never reaches the model.
import { exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { EMAIL, one, setOrgGuardrails } from "./turn-setup";

// The org's list is kept per isolate: the file leaves none behind for another file the isolate may run.
afterAll(() => setOrgGuardrails([]));

const bearer = { authorization: `Bearer ${TEST_KEYS.chat.key}` };

const DOORS = [
  {
    door: "chat completions",
    path: "/agent/v1/chat/completions",
    body: (text: string) => ({ model: "aptix-agent/general", messages: [{ role: "user", content: text }] }),
    headers: bearer,
  },
  {
    door: "Responses",
    path: "/agent/v1/responses",
    body: (text: string) => ({ model: "aptix-agent/general", input: text }),
    headers: bearer,
  },
  {
    door: "Messages",
    path: "/agent/v1/messages",
    body: (text: string) => ({
      model: "aptix-agent/general",
      max_tokens: 64,
      messages: [{ role: "user", content: text }],
    }),
    headers: { "x-api-key": TEST_KEYS.chat.key },
  },
];

/** The door's error as one shape: status, code (OpenAI) or type (Anthropic), and whether it names the guardrail. */
async function refusalOf(response: Response) {
  const body = (await response.json()) as { error: { code?: string; type: string; message: string } };
  return {
    status: response.status,
    code: body.error.code ?? body.error.type,
    names: body.error.message.includes('"pii"'),
  };
}

describe.each(DOORS)("the agent's $door door", ({ door, path, body, headers }) => {
  const code = door === "Messages" ? "invalid_request_error" : "guardrail_blocked";

  it("refuses a message an input guardrail blocks, naming it, and sends nothing upstream", async () => {
    await setOrgGuardrails([one("pii", "input", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const response = await exports.default.fetch(`http://aptix.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body(`mail ${EMAIL} ${script.marker}`)),
    });
    expect(await refusalOf(response)).toEqual({ status: 400, code, names: true });
    expect(await script.bodies()).toEqual([]);
  });

  it("refuses an answer an output guardrail blocks, naming it", async () => {
    await setOrgGuardrails([one("pii", "output", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: `Mail ${EMAIL}.` }]);
    const response = await exports.default.fetch(`http://aptix.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body(`who? ${script.marker}`)),
    });
    expect(await refusalOf(response)).toEqual({ status: 400, code, names: true });
  });
});

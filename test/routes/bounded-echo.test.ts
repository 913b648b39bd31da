// Error messages quote what the user sent, bounded: a 100 kB mode name never comes back as a 100 kB error.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders } from "../fixtures/keys";
import { createSession, type ErrorBody } from "../fixtures/sessions";

const HUGE = "m".repeat(100_000);
/** Enough for the fixed text around a quote of at most 100 characters. */
const BOUND = 400;

async function errorOf(method: string, path: string, body?: unknown): Promise<ErrorBody["error"]> {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method,
    headers: { ...authHeaders(), "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status).toBeGreaterThanOrEqual(400);
  return ((await response.json()) as ErrorBody).error;
}

describe("bounded echo of user input in errors", () => {
  it("quotes a 100 kB mode name in at most 100 characters when creating a session", async () => {
    const error = await errorOf("POST", "/context/sessions", { mode: HUGE });
    expect(error.code).toBe("unknown_mode");
    expect(error.message.length).toBeLessThan(BOUND);
    expect(error.message).toContain(`'${"m".repeat(100)}…' (100000 characters)`);
  });

  it("quotes a long mode key, system prompt id, workflow id and session id in at most 100 characters", async () => {
    const long = "x".repeat(5_000);
    const session = await createSession();
    const errors = await Promise.all([
      errorOf("PUT", `/admin/modes/${long}`, {}),
      errorOf("GET", `/v1/system-prompts/${long}/enhanced`),
      errorOf("POST", `/context/sessions/${session}/workflows/${long}`, { parameters: {} }),
      errorOf("GET", `/context/sessions/${long}`),
      errorOf("GET", `/${long}`),
    ]);
    for (const error of errors) expect(error.message.length, error.message.slice(0, 80)).toBeLessThan(BOUND);
  });

  it("quotes an unknown 10 kB field name in at most 100 characters", async () => {
    const error = await errorOf("POST", "/context/sessions", { [`f${"x".repeat(10_000)}`]: 1 });
    expect(error.message.length).toBeLessThan(BOUND);
  });

  it("quotes an unknown tool call id in at most 100 characters", async () => {
    const session = await createSession();
    const error = await errorOf("POST", `/context/sessions/${session}/approvals`, {
      decisions: [{ toolCallId: HUGE, approved: true }],
    });
    expect(error.message.length).toBeLessThan(BOUND);
  });
});

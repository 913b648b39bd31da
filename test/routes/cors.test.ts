// Web apps of other origins (src/auth/cors.ts): an origin CORS_ALLOWED_ORIGINS lists gets CORS answers (its
// preflight, readable answers and errors, the headers it needs exposed, no credentials); any other keeps the
// refusal, /mcp's included; a malformed list names itself.
import { describe, expect, it } from "vitest";
import { authHeaders } from "../fixtures/keys";
import { type ErrorBody, workerWith } from "../passthrough/harness";

const APP = "https://chat.example.com";
const listing = workerWith({ CORS_ALLOWED_ORIGINS: `${APP}, http://127.0.0.1:5173` });

function preflight(path: string, origin: string, method = "POST"): Promise<Response> {
  return listing.fetch(`http://aptix.test${path}`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization, content-type, x-aptix-session",
    },
  });
}

describe("CORS for the listed origins", () => {
  it("answers a listed origin's preflight with the methods and headers the API takes, no credentials", async () => {
    const answer = await preflight("/agent/v1/chat/completions", APP);
    expect(answer.status).toBe(204);
    expect({
      origin: answer.headers.get("access-control-allow-origin"),
      methods: answer.headers.get("access-control-allow-methods"),
      headers: answer.headers.get("access-control-allow-headers")?.split(","),
      credentials: answer.headers.get("access-control-allow-credentials"),
      maxAge: answer.headers.get("access-control-max-age"),
    }).toEqual({
      origin: APP,
      methods: "GET,POST,PUT,PATCH,DELETE",
      headers: [
        "authorization",
        "content-type",
        "accept",
        "x-aptix-session",
        "x-d1-bookmark",
        "last-event-id",
        "x-api-key",
      ],
      credentials: null,
      maxAge: "600",
    });
  });

  it("lets the official SDKs' own headers through a listed origin's preflight, and nothing else it asks for", async () => {
    const answer = await listing.fetch("http://aptix.test/v1/messages", {
      method: "OPTIONS",
      headers: {
        origin: APP,
        "access-control-request-method": "POST",
        "access-control-request-headers":
          "x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access, x-stainless-os, X-Stainless-Retry-Count, x-evil",
      },
    });
    const allowed = answer.headers.get("access-control-allow-headers")?.split(",") ?? [];
    expect(allowed).toEqual(
      expect.arrayContaining([
        "x-api-key",
        "anthropic-version",
        "anthropic-dangerous-direct-browser-access",
        "x-stainless-os",
        "x-stainless-retry-count",
      ]),
    );
    expect(allowed).not.toContain("x-evil");
  });

  it("exposes Anthropic's request-id to a listed origin", async () => {
    const answer = await listing.fetch("http://aptix.test/modes", { headers: { ...authHeaders(), origin: APP } });
    expect(answer.headers.get("access-control-expose-headers")?.split(",")).toContain("request-id");
  });

  it("marks a listed origin's answer readable by it, the session and bookmark headers exposed", async () => {
    const answer = await listing.fetch("http://aptix.test/modes", { headers: { ...authHeaders(), origin: APP } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe(APP);
    expect(answer.headers.get("access-control-expose-headers")?.split(",")).toEqual(
      expect.arrayContaining(["x-aptix-session", "x-d1-bookmark", "x-request-id", "retry-after"]),
    );
  });

  it("marks a listed origin's error readable too, so the app can show what was wrong", async () => {
    const answer = await listing.fetch("http://aptix.test/modes", { headers: { origin: APP } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("access-control-allow-origin")).toBe(APP);
    expect(((await answer.json()) as ErrorBody).error.code).toBe("missing_api_key");
  });

  it("refuses an origin that is not listed, its preflight included, with 403 origin_not_allowed", async () => {
    const answer = await preflight("/agent/v1/chat/completions", "https://elsewhere.example");
    expect(answer.status).toBe(403);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    expect(((await answer.json()) as ErrorBody).error).toMatchObject({
      code: "origin_not_allowed",
      message: `Requests from the origin 'https://elsewhere.example' are refused: only pages of http://aptix.test itself, or of ${APP}, http://127.0.0.1:5173 may call it (CORS_ALLOWED_ORIGINS).`,
    });
  });

  it("checks /mcp's Origin against the same list: a listed origin reaches the MCP door, another does not", async () => {
    const ping = (origin: string) =>
      listing.fetch("http://aptix.test/mcp", {
        method: "POST",
        headers: {
          ...authHeaders(),
          origin,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    const listed = await ping(APP);
    expect([listed.status, listed.headers.get("access-control-allow-origin")]).toEqual([200, APP]);
    expect((await ping("https://elsewhere.example")).status).toBe(403);
  });

  it("leaves a request with no Origin (not a browser's) as it was: no CORS headers", async () => {
    const answer = await listing.fetch("http://aptix.test/modes", { headers: authHeaders() });
    expect([answer.status, answer.headers.get("access-control-allow-origin")]).toEqual([200, null]);
  });

  it("answers every request 500 misconfigured when the list holds something that is not an origin", async () => {
    const answer = await workerWith({ CORS_ALLOWED_ORIGINS: "https://chat.example.com/app" }).fetch(
      "http://aptix.test/healthz",
    );
    expect(answer.status).toBe(500);
    expect(((await answer.json()) as ErrorBody).error.message).toBe(
      'The server is misconfigured: CORS_ALLOWED_ORIGINS must be origins such as https://chat.example.com, comma-separated (not "https://chat.example.com/app").',
    );
  });
});

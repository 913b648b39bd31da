// DNS rebinding and cross-origin pages (src/auth/origin-guard.ts): where ALLOWED_HOSTS is set (npm run dev sets
// loopback), another Host is refused; a request whose Origin is another site's is refused everywhere.

import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders } from "../fixtures/keys";
import { createSession } from "../fixtures/sessions";
import { issueTicket } from "../fixtures/socket";
import { newChatKey, worker, workerWith } from "../passthrough/harness";

const loopbackOnly = workerWith({ ALLOWED_HOSTS: "localhost,127.0.0.1,[::1]" });

async function status(response: Promise<Response>): Promise<[number, string | null]> {
  const answer = await response;
  const body = (await answer.json()) as { error?: { code: string } };
  return [answer.status, body.error?.code ?? null];
}

describe("the origin guard", () => {
  it("answers the loopback hosts ALLOWED_HOSTS names, IPv6 included", async () => {
    const { key } = await newChatKey();
    const headers = { authorization: `Bearer ${key}` };
    for (const host of ["localhost:8787", "127.0.0.1:8787", "[::1]:8787"]) {
      expect(await status(loopbackOnly.fetch(`http://${host}/modes`, { headers }))).toEqual([200, null]);
    }
  });

  it("refuses a rebound host with 403 host_not_allowed, key or not", async () => {
    const { key } = await newChatKey();
    const rebound = (headers: Record<string, string>) =>
      status(loopbackOnly.fetch("http://attacker.example:8787/mcp", { method: "POST", headers, body: "{}" }));
    expect(await rebound({ authorization: `Bearer ${key}` })).toEqual([403, "host_not_allowed"]);
    expect(await rebound({})).toEqual([403, "host_not_allowed"]);
  });

  it("answers any host when ALLOWED_HOSTS is empty, as deployed", async () => {
    const answer = await worker.fetch("http://aptix.example.workers.dev/modes", { headers: authHeaders() });
    expect(answer.status).toBe(200);
  });

  it("takes a page of the server's own origin (the console)", async () => {
    const answer = await worker.fetch("http://aptix.test/modes", {
      headers: { ...authHeaders(), origin: "http://aptix.test" },
    });
    expect(answer.status).toBe(200);
  });

  it("refuses a page of another origin with 403 origin_not_allowed, on the MCP door too", async () => {
    const fromElsewhere = { ...authHeaders(), origin: "http://attacker.example", "content-type": "application/json" };
    const mcp = worker.fetch("http://aptix.test/mcp", {
      method: "POST",
      headers: { ...fromElsewhere, accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(await status(mcp)).toEqual([403, "origin_not_allowed"]);
    expect(await status(worker.fetch("http://aptix.test/modes", { headers: fromElsewhere }))).toEqual([
      403,
      "origin_not_allowed",
    ]);
  });

  it("opens a session's ticketed WebSocket for a web app of another origin", async () => {
    const id = await createSession();
    const ticket = await issueTicket(id);
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/ws?ticket=${ticket}`, {
      headers: { upgrade: "websocket", origin: "https://app.example" },
    });
    expect(response.status).toBe(101);
    response.webSocket?.accept();
    response.webSocket?.close(1000, "done");
  });
});

// A web chat app of another origin, in a real browser (Debian's Chromium) against `wrangler dev` as `npm start` runs
// it with CORS_ALLOWED_ORIGINS: a page served from a second loopback origin creates a session and chats through the
// API when its origin is listed, and is refused when it is not (the browser sees no CORS answer).
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { launchChromium } from "./support.ts";

/** A chat app of its own origin: sends one message through the API with the local key, shows the answer or the failure. */
function chatPage(apiUrl: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Chat app</title></head><body>
<p id="answer">waiting</p>
<script type="module">
const api = ${JSON.stringify(apiUrl)};
const headers = { authorization: "Bearer dev-key", "content-type": "application/json" };
const show = (text) => { document.getElementById("answer").textContent = text; };
try {
  const created = await fetch(api + "/context/sessions", { method: "POST", headers, body: "{}" });
  const { sessionId } = await created.json();
  const turn = await fetch(api + "/context/sessions/" + sessionId + "/messages", {
    method: "POST", headers, body: JSON.stringify({ content: "Say hello." }),
  });
  const answer = await turn.json();
  show("answer: " + answer.status + ": " + answer.text);
} catch (error) {
  show("refused: " + error.name);
}
</script></body></html>`;
}

/** Serves one page on a loopback port of its own: its own origin. */
async function servePage(html: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(html());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { server, origin: `http://127.0.0.1:${port}` };
}

let worker: LocalWorker;
let browser: Browser;
let listed: { server: Server; origin: string };
let unlisted: { server: Server; origin: string };

before(async () => {
  // The pages' origins are known before the Worker starts, which lists one of them.
  listed = await servePage(() => chatPage(worker.url));
  unlisted = await servePage(() => chatPage(worker.url));
  worker = await startLocalWorker({ vars: { CORS_ALLOWED_ORIGINS: listed.origin } });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await worker?.stop();
  listed?.server.close();
  unlisted?.server.close();
});

async function answerOn(origin: string): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.goto(origin);
    await page.waitForFunction(() => document.getElementById("answer")?.textContent !== "waiting", null, {
      timeout: 30_000,
    });
    return (await page.textContent("#answer")) ?? "";
  } finally {
    await page.close();
  }
}

describe("a web chat app of another origin", () => {
  it("chats through the API from an origin CORS_ALLOWED_ORIGINS lists", async () => {
    const answer = await answerOn(listed.origin);
    assert.match(answer, /^answer: completed: \S/);
  });

  it("is refused from an origin the list does not name: the browser gets no CORS answer", async () => {
    const answer = await answerOn(unlisted.origin);
    assert.equal(answer, "refused: TypeError");
  });
});

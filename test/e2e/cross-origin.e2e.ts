// A web chat app of another origin, in a real browser (Debian's Chromium) against `wrangler dev` as `npm start` runs
// it with CORS_ALLOWED_ORIGINS: a page served from a second loopback origin creates a session and chats through the
// API when its origin is listed (with fetch, and with the official openai and Anthropic SDKs bundled for the browser),
// and is refused when it is not (the browser sees no CORS answer).
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { build } from "esbuild";
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

/**
 * A chat app that talks to the agent through the official SDKs, bundled for the browser (`/sdk.js`): the `openai`
 * client's chat completion on /agent/v1 and the Anthropic client's message on /agent/v1/messages, with the key the
 * app holds (the SDKs' `dangerouslyAllowBrowser`).
 */
function sdkPage(apiUrl: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>SDK chat app</title></head><body>
<p id="answer">waiting</p>
<script type="module">
import { OpenAI, Anthropic } from "/sdk.js";
const api = ${JSON.stringify(apiUrl)};
const show = (text) => { document.getElementById("answer").textContent = text; };
try {
  const openai = new OpenAI({ baseURL: api + "/agent/v1", apiKey: "dev-key", dangerouslyAllowBrowser: true, maxRetries: 0 });
  const completion = await openai.chat.completions.create({
    model: "aptix-agent/general", messages: [{ role: "user", content: "say hello to Dana" }],
  });
  const anthropic = new Anthropic({ baseURL: api + "/agent", apiKey: "dev-key", dangerouslyAllowBrowser: true, maxRetries: 0 });
  const message = await anthropic.messages.create({
    model: "aptix-agent/general", max_tokens: 256, messages: [{ role: "user", content: "say hello to Sam" }],
  });
  show("openai: " + completion.choices[0].message.content + " | anthropic: " + message.content[0].text);
} catch (error) {
  show("refused: " + error.name + ": " + error.message);
}
</script></body></html>`;
}

/** The two SDKs as one browser module. */
async function sdkBundle(): Promise<string> {
  const built = await build({
    stdin: {
      contents: 'export { default as OpenAI } from "openai"; export { default as Anthropic } from "@anthropic-ai/sdk";',
      resolveDir: process.cwd(),
      loader: "js",
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  return built.outputFiles[0]?.text ?? "";
}

/** Serves one page on a loopback port of its own: its own origin (and a script beside it, if given). */
async function servePage(html: () => string, script = ""): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    if (request.url === "/sdk.js") {
      response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
      response.end(script);
      return;
    }
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
let sdkApp: { server: Server; origin: string };

before(async () => {
  // The pages' origins are known before the Worker starts, which lists two of them.
  listed = await servePage(() => chatPage(worker.url));
  unlisted = await servePage(() => chatPage(worker.url));
  sdkApp = await servePage(() => sdkPage(worker.url), await sdkBundle());
  worker = await startLocalWorker({ vars: { CORS_ALLOWED_ORIGINS: `${listed.origin},${sdkApp.origin}` } });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await worker?.stop();
  listed?.server.close();
  unlisted?.server.close();
  sdkApp?.server.close();
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

  it("runs the official openai and Anthropic SDKs in a listed origin's page, their own headers let through", async () => {
    const answer = await answerOn(sdkApp.origin);
    assert.equal(
      answer,
      "openai: [offline demo model] Hello, Dana! Welcome to Aptix. | anthropic: [offline demo model] Hello, Sam! Welcome to Aptix.",
    );
  });

  it("is refused from an origin the list does not name: the browser gets no CORS answer", async () => {
    const answer = await answerOn(unlisted.origin);
    assert.equal(answer, "refused: TypeError");
  });
});

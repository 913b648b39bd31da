// A long conversation in the console: it draws the session's newest page of messages with a button that loads the
// earlier ones, and marks where the earlier messages were summarised (compaction), opening to the summary (the
// whole one read when the view carries a preview). The Worker runs the offline demo model with a small history
// budget, so a few turns are enough to compact.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { launchChromium } from "./support.ts";

const TURNS = 30;
let worker: LocalWorker;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let sessionId: string;

/** Reloads the page and waits for it to settle: drawn from GET, then again once the socket's first frame came. */
async function reloadSettled(): Promise<void> {
  await page.reload();
  await page.waitForFunction(() => document.querySelector("#app")?.getAttribute("data-socket") === "open");
  await page.waitForLoadState("networkidle");
}

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${worker.url}${path}`, {
    method,
    headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}

/** A session of TURNS turns, written through the API, whose earlier part has been summarised. */
async function longSession(): Promise<string> {
  const { sessionId } = (await api("POST", "/context/sessions", {})) as { sessionId: string };
  for (let n = 1; n <= TURNS; n++) {
    await api("POST", `/context/sessions/${sessionId}/messages`, { content: `Message ${n}: ${"notes ".repeat(40)}` });
  }
  // The newest compaction runs after the last turn's reply: its summary is there once it has ended.
  for (let tries = 0; tries < 100; tries++) {
    const view = await api("GET", `/context/sessions/${sessionId}`);
    if (view.summary) return sessionId;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("no summary was written");
}

before(async () => {
  worker = await startLocalWorker({ vars: { HISTORY_BUDGET_TOKENS: "1000" } });
  browser = await launchChromium();
  sessionId = await longSession();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.addInitScript((id) => sessionStorage.setItem("aptix.sessionId", id), sessionId);
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(worker.url);
  await page.locator("#api-key").fill("dev-key");
  await page.keyboard.press("Enter");
  await page.locator("#conversation > li.message.user").first().waitFor();
});

after(async () => {
  await context?.close();
  await browser?.close();
  await worker?.stop();
});

describe("a long conversation in the console", () => {
  it("draws the newest 50 messages, and the earlier ones when asked", async () => {
    const messages = page.locator("#conversation > li.message.user, #conversation > li.message.assistant");
    assert.equal(await messages.count(), 50);
    await page.locator("#load-earlier").click();
    await page.waitForFunction(
      (turns) => document.querySelectorAll("#conversation > li.message.user").length === turns,
      TURNS,
    );
    assert.equal(await messages.count(), TURNS * 2);
    assert.equal(await page.locator("#load-earlier").count(), 0, "no button once every message is there");
    assert.match(await messages.first().innerText(), /Message 1:/);
  });

  it("marks where the earlier messages were summarised, and opens to the summary", async () => {
    const marker = page.locator("#conversation > li.message.summary");
    assert.equal(await marker.count(), 1);
    assert.equal((await marker.locator("summary").innerText()).trim(), "Earlier messages were summarised");
    await marker.locator("summary").click();
    assert.match(await marker.locator(".summary-text").innerText(), /^\[offline demo model\] Summary:/);
  });

  it("reads the whole summary when the view carries only a preview of it", async () => {
    const whole = (await api("GET", `/context/sessions/${sessionId}/summary`)) as { summary: { text: string } };
    // The session's view as the server sends it for a summary longer than its preview: the text cut, marked so.
    await page.route(`**/context/sessions/${sessionId}`, async (route) => {
      const response = await route.fetch();
      const view = (await response.json()) as { summary: { text: string } };
      await route.fulfill({
        response,
        json: { ...view, summary: { ...view.summary, text: view.summary.text.slice(0, 12), truncated: true } },
      });
    });
    await reloadSettled();
    const marker = page.locator("#conversation > li.message.summary");
    await marker.locator("summary").click();
    assert.equal(await marker.locator(".summary-text").innerText(), whole.summary.text.slice(0, 12));
    await marker.getByRole("button", { name: "Show the whole summary" }).click();
    await page.waitForFunction(
      (text) => document.querySelector("#conversation > li.message.summary .summary-text")?.textContent === text,
      whole.summary.text,
    );
    assert.equal(await marker.getByRole("button", { name: "Show the whole summary" }).count(), 0);
    await page.unroute(`**/context/sessions/${sessionId}`);
  });

  it("reads a whole message when the view carries only the start of it", async () => {
    const view = (await api("GET", `/context/sessions/${sessionId}`)) as {
      conversation: { seq: number; role: string; content: string | null }[];
    };
    const newest = view.conversation.filter((m) => m.role === "assistant" && m.content).at(-1);
    if (!newest?.content) throw new Error("no answer in the view");
    const answer = page.locator("#conversation > li.message.assistant").last().locator(".content");
    const whole = await answer.innerText();
    // The session's view as the server sends it for an answer longer than its cut: the start, marked so.
    await page.route(`**/context/sessions/${sessionId}`, async (route) => {
      const response = await route.fetch();
      const sent = (await response.json()) as { conversation: { seq: number; content: string | null }[] };
      const conversation = sent.conversation.map((m) =>
        m.seq === newest.seq ? { ...m, content: (m.content ?? "").slice(0, 10), truncated: true } : m,
      );
      await route.fulfill({ response, json: { ...sent, conversation } });
    });
    await reloadSettled();
    const more = page.getByRole("button", { name: "Show the whole message" });
    assert.notEqual(await answer.innerText(), whole);
    await more.click();
    await more.waitFor({ state: "detached" });
    assert.equal(await answer.innerText(), whole);
    await page.unroute(`**/context/sessions/${sessionId}`);
  });
});

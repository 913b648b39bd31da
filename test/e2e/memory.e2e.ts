// Memory and message search in the console, in a real browser (Debian's Chromium) against `wrangler dev` with the
// offline demo model: the Memory panel lists the person's memories, adds, corrects, pins and deletes one, finds them
// by words, and forgets all of the person's own after a confirmation that says how many go (the org's stay); a
// conversation where the demo model saved a memory ("remember that …") shows "Saved to memory" and Undo forgets it;
// Ctrl+K finds a message of another conversation and opens that conversation at the message. axe-core finds no
// serious or critical violation in the panel, the confirmation or the search's results. Screenshots go to
// test-results/e2e/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import type { AxeResults } from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import {
  adminPageReady,
  adminPut,
  collectProblems,
  completedTurns,
  launchChromium,
  signInWithDevKey,
  waitForTurnAfter,
} from "./support.ts";

const SHOTS = "test-results/e2e";
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

interface Memory {
  id: string;
  text: string;
  scope: "user" | "org";
  pinned: boolean;
  source: { sessionId: string; turnId: string } | null;
}

let worker: LocalWorker;
let browser: Browser;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  worker = await startLocalWorker();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await worker?.stop();
});

/** The API as the dev-key's person (an org admin); the answer's status and parsed body. */
async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${worker.url}${path}`, {
    method,
    headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

/** Every memory the dev-key's person sees (theirs and the org's). */
async function memories(): Promise<Memory[]> {
  const { status, body } = await api<{ memories: Memory[] }>("GET", "/context/memories?limit=100");
  assert.equal(status, 200);
  return body.memories;
}

async function addMemory(text: string, scope: "user" | "org" = "user"): Promise<Memory> {
  const { status, body } = await api<Memory>("POST", "/context/memories", { text, scope });
  assert.equal(status, 201, JSON.stringify(body));
  return body;
}

/** Starts each test from no memory of the person's own and none of the org's. */
async function forgetAllByApi(): Promise<void> {
  for (const memory of await memories()) {
    assert.equal((await api("DELETE", `/context/memories/${memory.id}`)).status, 204);
  }
}

/** axe-core's serious or critical violations on the page as it is now (its ids and targets). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const { axe } = window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } };
    const results = await axe.run(document, { resultTypes: ["violations"] });
    return results.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  });
}

/** Sends `content` from the message box and waits for the turn's end. */
async function say(page: Page, content: string): Promise<void> {
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill(content);
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
}

/** Opens a new conversation (or the empty one there is) and waits until it is open. */
async function newConversation(page: Page): Promise<void> {
  await page.locator("#status-line").evaluate((line) => {
    line.textContent = "";
  });
  await page.locator("#new-session").click();
  await page.locator("#status-line", { hasText: /new conversation/i }).waitFor();
}

const openSessionId = async (page: Page) => (await page.locator("#session-id").innerText()).trim();

describe("the console's memory and message search", () => {
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    // bypassCSP: axe is injected as an inline script, which the console's policy refuses (as it should).
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      bypassCSP: true,
      colorScheme: "light",
    });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    collectProblems(page, problems);
    await signInWithDevKey(page, worker.url);
  });

  after(async () => {
    await context?.close();
  });

  it("lists, adds, corrects, pins, finds and deletes memories in the Memory panel", async () => {
    await forgetAllByApi();
    await page.locator("#open-memory").click();
    const dialog = page.locator("#memory-dialog");
    await dialog.waitFor({ state: "visible" });
    // Empty: it says what memory is and how the agent comes to save one.
    await dialog.locator(".memory-empty", { hasText: "remember that" }).waitFor();
    assert.deepEqual(await seriousViolations(page), []);

    await page.getByLabel("Add a memory").fill("I work in Lisbon");
    await dialog.getByRole("button", { name: "Add", exact: true }).click();
    await page.locator("#memory-status", { hasText: "The memory is saved." }).waitFor();
    await page.getByLabel("Add a memory").fill("My cat is called Miso");
    await page.getByLabel("Pinned (always used)").check();
    await dialog.getByRole("button", { name: "Add", exact: true }).click();
    await dialog.locator("#memory-list > li", { hasText: "My cat is called Miso" }).waitFor();
    assert.deepEqual((await memories()).map((m) => [m.text, m.pinned, m.scope]).sort(), [
      ["I work in Lisbon", false, "user"],
      ["My cat is called Miso", true, "user"],
    ]);

    // Found by words (?q=).
    await page.getByLabel("Find memories").fill("Lisbon");
    await dialog.locator("#memory-list > li", { hasText: "My cat" }).waitFor({ state: "detached" });
    assert.deepEqual(await dialog.locator("#memory-list .memory-text").allInnerTexts(), ["I work in Lisbon"]);

    // Corrected in place.
    await dialog.getByRole("button", { name: "Edit: I work in Lisbon" }).click();
    await page.getByLabel("Correct this memory").fill("I work in Porto");
    await dialog.getByRole("button", { name: "Save", exact: true }).click();
    await page.locator("#memory-status", { hasText: "The memory is corrected." }).waitFor();
    await page.getByLabel("Find memories").fill("");
    await dialog.locator("#memory-list > li", { hasText: "My cat" }).waitFor();

    const porto = dialog.locator("#memory-list > li", { hasText: "I work in Porto" });
    await porto.getByRole("button", { name: "Pin: I work in Porto" }).click();
    await page.locator("#memory-status", { hasText: "The memory is pinned" }).waitFor();
    await dialog.locator("#memory-list > li.pinned", { hasText: "I work in Porto" }).waitFor();

    await dialog.getByRole("button", { name: "Delete: My cat is called Miso" }).click();
    await page.locator("#memory-status", { hasText: "The memory is deleted." }).waitFor();
    assert.deepEqual(
      (await memories()).map((m) => [m.text, m.pinned]),
      [["I work in Porto", true]],
    );
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/memory-panel.png` });
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
  });

  it("forgets everything of the person's own only after a confirmation naming how many go; the org's stay", async () => {
    await forgetAllByApi();
    await addMemory("I prefer short answers");
    await addMemory("I use Vim");
    await addMemory("My team ships on Thursdays");
    await addMemory("The company's fiscal year starts in April", "org");

    await page.locator("#open-memory").click();
    const dialog = page.locator("#memory-dialog");
    await dialog.locator("#memory-list > li", { hasText: "fiscal year" }).waitFor();
    // The org's memory is marked as the org's.
    assert.equal(
      await dialog.locator('#memory-list > li[data-scope="org"] .badge', { hasText: "Organization" }).count(),
      1,
    );

    await page.locator("#forget-all").click();
    const confirm = page.locator("#forget-dialog");
    await confirm.waitFor({ state: "visible" });
    assert.match(await page.locator("#forget-text").innerText(), /all 3 of your memories/);
    assert.deepEqual(await seriousViolations(page), []);
    // Cancel (the button the focus starts on) keeps them.
    await page.keyboard.press("Enter");
    await confirm.waitFor({ state: "hidden" });
    assert.equal((await memories()).length, 4);

    await page.locator("#forget-all").click();
    await confirm.waitFor({ state: "visible" });
    await page.locator("#confirm-forget").click();
    await page.locator("#memory-status", { hasText: "Forgot 3 memories." }).waitFor();
    assert.deepEqual(
      (await memories()).map((m) => [m.text, m.scope]),
      [["The company's fiscal year starts in April", "org"]],
    );
    assert.deepEqual(await dialog.locator("#memory-list .memory-text").allInnerTexts(), [
      "The company's fiscal year starts in April",
    ]);
    await page.locator("#close-memory").click();
    await dialog.waitFor({ state: "hidden" });
  });

  it("marks where the agent saved or updated a memory; Undo puts the old text back, then forgets it", async () => {
    await forgetAllByApi();
    await newConversation(page);
    await say(page, "Remember that my favourite colour is teal.");
    const added = page.locator("#conversation .memory-mark").first();
    await added.waitFor();
    assert.equal(await added.locator(".memory-mark-text").innerText(), "Saved to memory: My favourite colour is teal.");
    const [saved] = await memories();
    assert.deepEqual(
      [saved?.text, saved?.source?.sessionId],
      ["My favourite colour is teal.", await openSessionId(page)],
    );

    // A contradiction updates the memory rather than adding one.
    await say(page, "Remember that my favourite colour is green.");
    const updated = page.locator("#conversation .memory-mark").nth(1);
    assert.equal(
      await updated.locator(".memory-mark-text").innerText(),
      "Memory updated: My favourite colour is green.",
    );
    assert.deepEqual(
      (await memories()).map((m) => [m.id, m.text]),
      [[saved?.id, "My favourite colour is green."]],
    );
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/memory-marks.png` });

    // Undo of the update puts the old text back; undo of the addition forgets it.
    await updated.getByRole("button", { name: /^Undo/ }).click();
    await page.locator("#conversation .memory-mark.undone").waitFor();
    assert.deepEqual(
      (await memories()).map((m) => m.text),
      ["My favourite colour is teal."],
    );
    await added.getByRole("button", { name: /^Undo/ }).click();
    await page.locator("#conversation .memory-mark.undone").nth(1).waitFor();
    assert.deepEqual(await memories(), []);

    // The next turn redraws the conversation: the marks stay undone.
    await say(page, "What modes are there?");
    assert.equal(await page.locator("#conversation .memory-mark.undone").count(), 2);
    assert.equal(await page.locator("#conversation .memory-mark button").count(), 0);
  });

  it("finds a message of another conversation with Ctrl+K and opens that conversation at it", async () => {
    await newConversation(page);
    await say(page, "Our launch codename is Quokka Harbour, keep it in mind.");
    await say(page, "What modes are there?");
    await say(page, "Show me how aptix works");
    const first = await openSessionId(page);
    // The index is fed when a turn ends, off the reply path: wait until it has the message.
    for (;;) {
      const { body } = await api<{ results: { sessionId: string }[] }>("GET", "/context/search?q=quokka");
      if (body.results.some((r) => r.sessionId === first)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await newConversation(page);
    assert.notEqual(await openSessionId(page), first);

    await page.locator("#composer-input").focus();
    await page.keyboard.press("Control+k");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "session-search");
    await page.keyboard.type("quokka");
    const result = page.locator(`#message-result-list > li[data-session-id="${first}"]`).first();
    await result.waitFor();
    assert.deepEqual(await result.locator("mark").allInnerTexts(), ["Quokka"]);
    const seq = Number(await result.getAttribute("data-seq"));
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/message-search.png` });

    await result.getByRole("button").click();
    await page.waitForFunction((id) => document.querySelector("#session-id")?.textContent === id, first);
    const message = page.locator(`#conversation > li[data-seq="${seq}"]`);
    await message.and(page.locator(".found")).waitFor();
    assert.match(await message.innerText(), /Quokka Harbour/);
    // In sight in the conversation's pane (which scrolls), though the conversation's end is further down: once the
    // conversation opened at it is drawn (a redraw while it loads may move it for a frame), within its highlight.
    const sight = await page
      .waitForFunction(
        (at) => {
          const item = document.querySelector(`#conversation > li[data-seq="${at}"]`);
          const pane = document.querySelector("#chat-scroll")?.getBoundingClientRect();
          if (!item || !pane) return null;
          const box = item.getBoundingClientRect();
          const seen = { top: box.top >= pane.top - 1, bottom: Math.min(box.bottom, box.top + 40) <= pane.bottom };
          return seen.top && seen.bottom ? seen : null;
        },
        seq,
        { timeout: 3_000 },
      )
      .then((handle) => handle.jsonValue())
      .catch(() => null);
    assert.deepEqual(sight, { top: true, bottom: true });
    const endBelow = await page.evaluate(() => {
      const last = document.querySelector("#conversation > li:last-child")?.getBoundingClientRect();
      const pane = document.querySelector("#chat-scroll")?.getBoundingClientRect();
      return Boolean(last && pane && last.bottom > pane.bottom);
    });
    assert.equal(endBelow, true, "the conversation's end is further down, out of sight");
    // Nothing failed in the page (the undo and the searches included).
    assert.deepEqual(problems, []);
  });
  it("turns memory off for the org and a mode off on the admin page; off, the panel says so and adding is refused", async () => {
    await adminPut(worker.url, "/admin/modes/notes", {
      displayName: "Notes",
      description: "Short notes.",
      systemPrompt: "Take notes.",
      tools: [],
      modelRoute: "default",
    });
    await page.goto(`${worker.url}/admin.html`);
    await adminPageReady(page);
    const memorySwitch = page.getByLabel("Memory on for the organization");
    assert.equal(await memorySwitch.isChecked(), true);
    await memorySwitch.uncheck();
    await page.locator("#memory-admin-status", { hasText: "Memory is off" }).waitFor();
    assert.deepEqual((await api("GET", "/admin/memory")).body, { enabled: false });

    // A mode's own switch, in the mode editor (on by default).
    await page.getByRole("button", { name: "Edit Notes" }).click();
    const modeMemory = page.locator("#mode-editor").getByRole("checkbox", { name: /^Memory/ });
    assert.equal(await modeMemory.isChecked(), true);
    await modeMemory.uncheck();
    await page.locator("#mode-editor").getByRole("button", { name: "Save" }).click();
    await page.locator("#modes-status", { hasText: "Saved the mode Notes" }).waitFor();
    const { body } = await api<{ modes: { key: string; memory: boolean }[] }>("GET", "/admin/modes");
    assert.equal(body.modes.find((m) => m.key === "notes")?.memory, false);

    await page.goto(worker.url);
    await page.locator("#app").waitFor({ state: "visible" });
    await page.locator("#open-memory").click();
    await page.locator("#memory-off").waitFor({ state: "visible" });
    await page.getByLabel("Add a memory").fill("I like tea");
    await page.locator("#memory-dialog").getByRole("button", { name: "Add", exact: true }).click();
    await page.locator("#memory-status", { hasText: /off/i }).waitFor();
    assert.deepEqual(await memories(), []);
    assert.deepEqual(await seriousViolations(page), []);
    await page.locator("#close-memory").click();
    assert.equal((await api("PUT", "/admin/memory", { enabled: true })).status, 200);
    // The one refused request (adding while memory is off); nothing else went wrong.
    assert.deepEqual(
      problems.filter((problem) => !problem.includes("status of 409")),
      [],
    );
  });
});

// Managing conversations in the console, in a real browser (Debian's Chromium) against `wrangler dev` with the
// offline demo model: rename, export as Markdown and JSON, archive and show archived, search titles, and delete
// after a confirmation dialog; from the keyboard alone too. Screenshots go to test-results/e2e/.
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { collectProblems, completedTurns, launchChromium, signInWithDevKey, waitForTurnAfter } from "./support.ts";

const SHOTS = "test-results/e2e";

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

/** The sidebar entry of a session. */
const entryOf = (page: Page, sessionId: string) => page.locator(`#session-list > li[data-session-id="${sessionId}"]`);

/** Sends a message in the open session and waits for its turn to end. */
async function say(page: Page, content: string): Promise<void> {
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill(content);
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
}

async function openSessionId(page: Page): Promise<string> {
  return (await page.locator("#session-id").innerText()).trim();
}

async function status(sessionId: string): Promise<number> {
  const response = await fetch(`${worker.url}/context/sessions/${sessionId}`, {
    headers: { authorization: "Bearer dev-key" },
  });
  await response.body?.cancel();
  return response.status;
}

/** The title the sidebar shows for a session, once the list has written it. */
async function waitForTitle(page: Page, sessionId: string, title: string): Promise<void> {
  await page.waitForFunction(
    ([id, text]) => {
      const shown = document.querySelector(`#session-list > li[data-session-id="${id}"] .session-title`);
      return shown?.textContent === text;
    },
    [sessionId, title] as const,
    { timeout: 15_000 },
  );
}

describe("managing conversations in the console", () => {
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  let first = "";
  let second = "";

  before(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    collectProblems(page, problems);
    await signInWithDevKey(page, worker.url);
  });

  after(async () => {
    await context?.close();
  });

  it("renames a conversation from its sidebar entry; the new title stays after the next message", async () => {
    first = await openSessionId(page);
    await say(page, "what modes are there?");
    await waitForTitle(page, first, "what modes are there?");
    await entryOf(page, first).getByRole("button", { name: "Manage “what modes are there?”" }).click();
    const dialog = page.locator("#manage-dialog");
    await dialog.waitFor({ state: "visible" });
    assert.equal(await page.evaluate(() => document.activeElement?.id), "rename-input");
    await page.locator("#rename-input").fill("Modes overview");
    await page.keyboard.press("Enter");
    await page.locator("#manage-status", { hasText: "Renamed." }).waitFor();
    await page.locator("#close-manage").click();
    await waitForTitle(page, first, "Modes overview");
    await say(page, "and what tools?");
    // The list's write after that turn has landed (the sidebar refreshes after a turn): the title is still the person's.
    await page.waitForTimeout(1_500);
    assert.equal(await entryOf(page, first).locator(".session-title").innerText(), "Modes overview");
    await page.screenshot({ path: `${SHOTS}/manage-renamed.png` });
  });

  it("exports the conversation as Markdown and as JSON files", async () => {
    await entryOf(page, first).locator(".session-manage").click();
    const [markdown] = await Promise.all([page.waitForEvent("download"), page.locator("#export-markdown").click()]);
    assert.match(markdown.suggestedFilename(), /^aptix-session-[0-9a-f]{12}\.md$/);
    const text = await readFile(await markdown.path(), "utf8");
    assert.equal(text.split("\n")[0], "# Modes overview");
    assert.match(text, /## User \(.*\)\n\nwhat modes are there\?/);
    const [json] = await Promise.all([page.waitForEvent("download"), page.locator("#export-json").click()]);
    assert.match(json.suggestedFilename(), /^aptix-session-[0-9a-f]{12}\.json$/);
    const doc = JSON.parse(await readFile(await json.path(), "utf8")) as {
      format: string;
      session: { sessionId: string; title: string };
      messages: { role: string; content: string | null }[];
    };
    assert.equal(doc.format, "aptix.session.v1");
    assert.deepEqual([doc.session.sessionId, doc.session.title], [first, "Modes overview"]);
    assert.deepEqual(
      doc.messages.filter((m) => m.role === "user").map((m) => m.content),
      ["what modes are there?", "and what tools?"],
    );
    await page.locator("#close-manage").click();
  });

  it("archives a conversation: gone from the list, back under Show archived, and unarchived again", async () => {
    await page.locator("#new-session").click();
    await page.waitForFunction((id) => document.querySelector("#session-id")?.textContent !== id, first);
    second = await openSessionId(page);
    await say(page, "a second conversation");
    await waitForTitle(page, second, "a second conversation");
    await entryOf(page, first).locator(".session-manage").click();
    await page.locator("#archive-session").click();
    await page.locator("#manage-status", { hasText: "Archived" }).waitFor();
    await page.locator("#close-manage").click();
    await entryOf(page, first).waitFor({ state: "detached" });
    await page.locator("#show-archived").check();
    await entryOf(page, first).locator(".badge", { hasText: "Archived" }).waitFor();
    await entryOf(page, second).waitFor({ state: "detached" });
    await entryOf(page, first).locator(".session-manage").click();
    assert.equal(await page.locator("#archive-session").innerText(), "Unarchive");
    await page.locator("#archive-session").click();
    await page.locator("#manage-status", { hasText: "Unarchived." }).waitFor();
    await page.locator("#close-manage").click();
    await entryOf(page, first).waitFor({ state: "detached" });
    await page.locator("#show-archived").uncheck();
    await entryOf(page, first).waitFor();
  });

  it("searches the titles", async () => {
    await page.locator("#session-search").fill("OVERVIEW");
    await entryOf(page, second).waitFor({ state: "detached" });
    await entryOf(page, first).waitFor();
    await page.locator("#session-search").fill("nothing like this");
    await page.locator("#session-list-empty").waitFor({ state: "visible" });
    await page.locator("#session-search").fill("");
    await entryOf(page, second).waitFor();
  });

  it("asks before deleting; Cancel keeps the conversation, Delete removes it for good", async () => {
    await entryOf(page, first).locator(".session-manage").click();
    await page.locator("#delete-session").click();
    const confirm = page.locator("#delete-dialog");
    await confirm.waitFor({ state: "visible" });
    assert.match(await page.locator("#delete-text").innerText(), /“Modes overview”.*cannot be undone/s);
    assert.equal(await page.evaluate(() => document.activeElement?.id), "cancel-delete", "Cancel has the focus");
    await page.screenshot({ path: `${SHOTS}/manage-delete-confirm.png` });
    await page.locator("#cancel-delete").click();
    await confirm.waitFor({ state: "hidden" });
    assert.equal(await status(first), 200);
    await page.locator("#delete-session").click();
    await page.locator("#confirm-delete").click();
    await page.locator("#manage-dialog").waitFor({ state: "hidden" });
    await entryOf(page, first).waitFor({ state: "detached" });
    assert.equal(await status(first), 404);
    await page.locator("#status-line", { hasText: "The conversation was deleted." }).waitFor();
  });

  it("deletes the open conversation from the keyboard alone, and opens another", async () => {
    assert.equal(await openSessionId(page), second);
    await page.locator("#composer-input").focus();
    // Shift+Tab back from the message box to the open conversation's Manage button, as a person would.
    for (let presses = 0; presses < 40; presses += 1) {
      const here = await page.evaluate(
        (id) =>
          document.activeElement?.closest(`li[data-session-id="${id}"]`) !== null &&
          document.activeElement?.classList.contains("session-manage"),
        second,
      );
      if (here) break;
      await page.keyboard.press("Shift+Tab");
    }
    await page.keyboard.press("Enter");
    await page.locator("#manage-dialog").waitFor({ state: "visible" });
    await page.keyboard.type(" (kept briefly)");
    await page.keyboard.press("Enter");
    await page.locator("#manage-status", { hasText: "Renamed." }).waitFor();
    for (let presses = 0; presses < 10; presses += 1) {
      if (await page.evaluate(() => document.activeElement?.id === "delete-session")) break;
      await page.keyboard.press("Tab");
    }
    await page.keyboard.press("Enter");
    await page.locator("#delete-dialog").waitFor({ state: "visible" });
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "confirm-delete");
    await page.keyboard.press("Enter");
    await page.waitForFunction((id) => document.querySelector("#session-id")?.textContent !== id, second);
    assert.equal(await status(second), 404);
    await page.waitForFunction(() => document.querySelector("#app")?.getAttribute("data-socket") === "open");
    await page.waitForFunction(() => document.activeElement?.id === "composer-input");
  });

  it("logged no console errors or warnings", () => {
    assert.deepEqual(problems, []);
  });
});

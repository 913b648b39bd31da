// Schedules in the console, in a real browser (Debian's Chromium) against `wrangler dev` with the offline demo model:
// "Run this every…" from a conversation makes a schedule that continues it; the Schedules dialog lists it with its
// next run, runs it now (its last run links to the conversation, its runs list it), disables and deletes it;
// axe-core finds no serious or critical violation in either dialog. Screenshots go to test-results/e2e/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import type { AxeResults } from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { collectProblems, completedTurns, launchChromium, signInWithDevKey, waitForTurnAfter } from "./support.ts";

const SHOTS = "test-results/e2e";
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

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

/** axe-core's serious or critical violations on the page as it is now (its ids and targets). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const { axe } = window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } };
    const results = await axe.run(document, { resultTypes: ["violations"] });
    return results.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  });
  return violations;
}

describe("schedules in the console", () => {
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    // bypassCSP: axe is injected as an inline script, which the console's policy refuses (as it should).
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      bypassCSP: true,
      timezoneId: "Europe/Berlin",
    });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    collectProblems(page, problems);
    await signInWithDevKey(page, worker.url);
  });

  after(async () => {
    await context?.close();
  });

  it("makes a schedule from a conversation, runs it now, disables and deletes it", async () => {
    const turns = await completedTurns(page);
    await page.locator("#composer-input").fill("what modes are there?");
    await page.keyboard.press("Enter");
    await waitForTurnAfter(page, turns);
    const sessionId = (await page.locator("#session-id").innerText()).trim();
    const entry = page.locator(`#session-list > li[data-session-id="${sessionId}"]`);
    await entry.locator(".session-manage").click();
    await page.locator("#schedule-session").click();

    const dialog = page.locator("#schedule-dialog");
    await dialog.waitFor({ state: "visible" });
    // The prompt is the conversation's last message; the zone is the browser's.
    await page.waitForFunction(() => (document.querySelector("#schedule-prompt") as HTMLTextAreaElement).value !== "");
    assert.deepEqual(
      [await page.locator("#schedule-prompt").inputValue(), await page.locator("#schedule-timezone").inputValue()],
      ["what modes are there?", "Europe/Berlin"],
    );
    assert.deepEqual(await seriousViolations(page), []);
    // A bad interval is refused with the server's words, beside its field.
    await page.locator("#schedule-name").fill("Modes digest");
    await page.locator("#schedule-when").fill("30s");
    await page.locator("#schedule-save").click();
    await page.locator("#schedule-error", { hasText: "every must be at least a minute" }).waitFor();
    assert.equal(await page.locator("#schedule-when").getAttribute("aria-invalid"), "true");
    await page.locator("#schedule-when").fill("1h");
    await page.locator("#schedule-save").click();

    const list = page.locator("#schedules-dialog");
    await list.waitFor({ state: "visible" });
    const item = list.locator("#schedules-list > li", { hasText: "Modes digest" });
    await item.locator(".schedule-next", { hasText: /^Next run: (?!disabled)/ }).waitFor();
    await page.locator("#schedules-status", { hasText: "Modes digest will run next" }).waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/schedules-list.png` });

    await item.getByRole("button", { name: "Run now: Modes digest" }).click();
    await page.locator("#schedules-status", { hasText: "Modes digest started." }).waitFor();
    await item
      .locator("span", { hasText: /^Last run: (running|completed)/ })
      .first()
      .waitFor();
    // Its runs, read when opened: the one run now, with its conversation.
    await item.locator("summary", { hasText: "Runs" }).click();
    await item.locator(".schedule-runs > li", { hasText: /: (running|completed)/ }).waitFor();
    assert.equal(await item.locator(".schedule-runs > li").count(), 1);

    await item.getByRole("checkbox", { name: "Enabled" }).uncheck();
    await page.locator("#schedules-status", { hasText: "Modes digest is disabled." }).waitFor();
    await list.locator("#schedules-list > li", { hasText: "Next run: disabled" }).waitFor();

    // The last run continues the conversation it was made from: its link opens it.
    await list.getByRole("button", { name: "Open its conversation (the last run of Modes digest)" }).click();
    await list.waitFor({ state: "hidden" });
    assert.equal((await page.locator("#session-id").innerText()).trim(), sessionId);

    await page.locator("#open-schedules").click();
    await list.getByRole("button", { name: "Delete: Modes digest" }).click();
    await list.locator("#schedules-list > li", { hasText: "No schedule yet." }).waitFor();
    // The browser notes the one refused request (the 30 s interval); nothing else went wrong.
    assert.deepEqual(
      problems.filter((problem) => !problem.includes("status of 400")),
      [],
    );
    assert.equal(problems.length, 1);
  });
});

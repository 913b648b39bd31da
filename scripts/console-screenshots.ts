// npm run docs:screenshots — the pictures of the console in README.md and docs/console.md, as a new user sees it after `npm start`: the Worker
// started through `npm start` itself (its migrations, its seed, the offline demo model and its modes, the dev-key),
// in a throw-away state directory, driven by Debian's Chromium. It asks the demo "show me how aptix works" and takes
// the answer at a desktop size (docs/console.png) and a phone's (docs/console-phone.png). Then it tells the demo
// "remember that …" twice, pins one memory, and takes the Memory panel (docs/console-memory.png).
import { mkdir } from "node:fs/promises";
import { startLocalWorker } from "../bench/support/local-worker.ts";
import { completedTurns, launchChromium, signInWithDevKey, waitForTurnAfter } from "../test/e2e/support.ts";

const SIZES = [
  { file: "docs/console.png", width: 1280, height: 800 },
  { file: "docs/console-phone.png", width: 390, height: 844 },
] as const;

const worker = await startLocalWorker({ throughNpmStart: true });
const browser = await launchChromium();
try {
  await mkdir("docs", { recursive: true });
  for (const size of SIZES) {
    const context = await browser.newContext({
      viewport: { width: size.width, height: size.height },
      deviceScaleFactor: size.width < 600 ? 2 : 1,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signInWithDevKey(page, worker.url);
    const turns = await completedTurns(page);
    await page.locator("#composer-input").fill("show me how aptix works");
    await page.keyboard.press("Enter");
    await waitForTurnAfter(page, turns);
    // Diagrams and highlighting arrive after the answer: wait for them, then a frame for the view to settle.
    await page.waitForFunction(() => document.querySelectorAll("pre code:not(.hljs)").length === 0);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 500)));
    await page.screenshot({ path: size.file });
    console.log(`${size.file}: ${size.width}x${size.height}`);
    await context.close();
  }
  await memoryPanel(worker.url);
} finally {
  await browser.close();
  await worker.stop();
}

/** The Memory panel with what the demo saved when told to remember, one memory pinned: docs/console-memory.png. */
async function memoryPanel(url: string): Promise<void> {
  const file = "docs/console-memory.png";
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await signInWithDevKey(page, url);
  for (const fact of ["remember that I work in Lisbon", "remember that I prefer short answers with examples"]) {
    const turns = await completedTurns(page);
    await page.locator("#composer-input").fill(fact);
    await page.keyboard.press("Enter");
    await waitForTurnAfter(page, turns);
  }
  await page.locator("#conversation .memory-mark").first().waitFor();
  await page.locator("#open-memory").click();
  const dialog = page.locator("#memory-dialog");
  await dialog.locator("#memory-list > li", { hasText: "Lisbon" }).getByRole("button", { name: /^Pin:/ }).click();
  await dialog.locator("#memory-list > li.pinned").waitFor();
  await page.locator("#memory-status").evaluate((status) => {
    status.textContent = "";
  });
  await page.screenshot({ path: file });
  console.log(`${file}: 1280x800`);
  await context.close();
}

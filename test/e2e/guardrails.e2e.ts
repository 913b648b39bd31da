// A message an input guardrail blocks, in the console in a real browser (Debian's Chromium) against `wrangler dev`
// with the offline demo model: the person reads which guardrail stopped it and why, in plain words, their text stays
// in the message box to be edited, and the conversation shows nothing of it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { adminPut, collectProblems, launchChromium, signInWithDevKey } from "./support.ts";

let worker: LocalWorker;
let browser: Browser;

before(async () => {
  worker = await startLocalWorker();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await worker?.stop();
});

describe("the console's blocked message", () => {
  it("says which guardrail blocked it and keeps the text in the message box", async () => {
    await adminPut(worker.url, "/admin/guardrails", {
      guardrails: [{ name: "no_personal_data", kind: "pii", points: ["input"], action: "block" }],
      passthrough: false,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const problems: string[] = [];
      collectProblems(page, problems);
      await signInWithDevKey(page, worker.url);
      const text = "Please write to dana.smith@example.com about the invoice.";
      await page.locator("#composer-input").fill(text);
      await page.keyboard.press("Enter");
      const status = page.locator("#status-line.error", { hasText: '"no_personal_data"' });
      await status.waitFor();
      assert.match(await status.innerText(), /personal data/i);
      assert.equal(await page.locator("#composer-input").inputValue(), text);
      // The session was redrawn from the server, which stored nothing of the message.
      await page.waitForFunction(() => document.querySelectorAll("#conversation .message").length === 0);
      assert.deepEqual(
        problems.filter((p) => !p.includes("400")),
        [],
      );
    } finally {
      await context.close();
      await adminPut(worker.url, "/admin/guardrails", { guardrails: [], passthrough: false });
    }
  });
});

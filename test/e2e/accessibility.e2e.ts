// An accessibility audit with axe-core, in a real browser (Debian's Chromium) against `wrangler dev`: the console
// signed in with an answer holding a table and code (light and dark), the admin page (light and dark) and /docs, on
// a desktop (1280x800) and a phone (390x844): no violation of serious or critical impact. And the keyboard reaches
// every control of the header and the message box. The console's newer parts are audited too: a stopped answer, a
// request for the person's client, and a phone's header menu open. Screenshots of each page go to test-results/e2e/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import type { AxeResults } from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { type ScriptedUpstream, startScriptedUpstream } from "../upstream/scripted-upstream.ts";
import {
  adminPageReady,
  completedTurns,
  launchChromium,
  scriptedMode,
  signInWithDevKey,
  waitForTurnAfter,
} from "./support.ts";

const SHOTS = "test-results/e2e";
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const VIEWPORTS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;
const SCHEMES = ["light", "dark"] as const;

interface Violation {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

let worker: LocalWorker;
let browser: Browser;
let upstream: ScriptedUpstream;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  worker = await startLocalWorker();
  upstream = await startScriptedUpstream();
  await scriptedMode(worker.url, upstream.url, {
    key: "scripted",
    displayName: "Scripted",
    tools: [],
    route: "scripted",
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await upstream?.close();
  await worker?.stop();
});

/**
 * A context for an audit. The pages' Content Security Policy (public/_headers: script-src 'self') refuses the inline
 * script addScriptTag injects axe with, so this context alone bypasses it; the pages are otherwise as served.
 */
function auditContext(viewport: (typeof VIEWPORTS)[number], colorScheme: "light" | "dark"): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    colorScheme,
    bypassCSP: true,
  });
}

/** axe-core's violations of serious or critical impact on the page as it is now. */
async function seriousViolations(page: Page): Promise<Violation[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const { axe } = window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } };
    const results = await axe.run(document, { resultTypes: ["violations"] });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(" ")),
    }));
  });
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

function assertNoViolation(violations: Violation[]): void {
  assert.equal(
    violations.length,
    0,
    `axe-core's serious or critical violations:\n${JSON.stringify(violations, null, 2)}`,
  );
}

/** Signs in and asks the demo model for its tour: Markdown with a table, highlighted code and a diagram. */
async function consoleWithTour(page: Page): Promise<void> {
  await signInWithDevKey(page, worker.url);
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill("show me how aptix works");
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
  const answer = page.locator("#conversation > li.message.assistant").last();
  await answer.locator("table").waitFor();
  await answer.locator("pre > code.hljs").waitFor();
  await answer.locator("figure.diagram svg").waitFor();
}

async function openAdmin(page: Page): Promise<void> {
  await page.goto(`${worker.url}/admin.html`);
  await adminPageReady(page);
  await page.locator("#keys-body tr").first().waitFor();
  await page.locator("#usage-chart canvas").waitFor();
}

for (const viewport of VIEWPORTS) {
  for (const scheme of SCHEMES) {
    describe(`axe-core on a ${viewport.name} (${viewport.width}x${viewport.height}), ${scheme}`, () => {
      let context: BrowserContext;
      let page: Page;

      before(async () => {
        context = await auditContext(viewport, scheme);
        page = await context.newPage();
        page.setDefaultTimeout(15_000);
      });

      after(async () => {
        await context?.close();
      });

      it("finds no serious or critical violation in the console with a table and code", async () => {
        await consoleWithTour(page);
        await page.screenshot({ path: `${SHOTS}/console-${viewport.name}-${scheme}.png` });
        assertNoViolation(await seriousViolations(page));
      });

      if (viewport.name === "phone") {
        it("finds none in the console with the modes panel open", async () => {
          await page.locator("#toggle-side").click();
          await page.locator("#modes-panel dt").first().waitFor({ state: "visible" });
          assertNoViolation(await seriousViolations(page));
        });
      }

      it("finds none in the admin page", async () => {
        await openAdmin(page);
        await page.screenshot({ path: `${SHOTS}/admin-${viewport.name}-${scheme}.png`, fullPage: true });
        assertNoViolation(await seriousViolations(page));
      });
    });
  }

  it(`finds none in the console with a stopped answer, a request for the client and the header's actions on a ${viewport.name}`, async () => {
    const context = await auditContext(viewport, "light");
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await signInWithDevKey(page, worker.url);
      const switchTo = async (key: string, name: string) => {
        await page.locator("#mode-picker").selectOption(key);
        await page.locator("#mode-form button[type=submit]").click();
        await page.waitForFunction((shown) => document.querySelector("#current-mode")?.textContent === shown, name);
      };
      await switchTo("scripted", "Scripted");
      const slow = upstream.createScript([
        { type: "completion", content: "An answer cut short by the person.", chunkSize: 4, chunkDelayMs: 250 },
      ]);
      const turns = await completedTurns(page);
      await page.locator("#composer-input").fill(`Take your time. ${slow.marker}`);
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => (document.querySelector("#streaming")?.textContent ?? "").length >= 8);
      await page.locator("#stop-turn").click();
      await waitForTurnAfter(page, turns);
      await page.locator("#conversation .stopped-mark").waitFor();
      await switchTo("workspace", "Workspace");
      await page.locator("#composer-input").fill("read README.md");
      await page.keyboard.press("Enter");
      await page.locator("#client-tools article.client-tool").waitFor();
      if (viewport.name === "phone") {
        await page.locator("#open-menu").click();
        await page.locator("#open-workflows").waitFor({ state: "visible" });
      }
      await page.screenshot({ path: `${SHOTS}/console-newer-parts-${viewport.name}.png` });
      assertNoViolation(await seriousViolations(page));
    } finally {
      await context.close();
    }
  });

  it(`finds no serious or critical violation in the API reference at /docs on a ${viewport.name}`, async () => {
    const context = await auditContext(viewport, "light");
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${worker.url}/docs/`);
      await page.locator("#docs-key").fill("dev-key");
      await page.getByRole("button", { name: "Load the reference" }).click();
      await page.locator(".opblock").first().waitFor({ timeout: 15_000 });
      assertNoViolation(await seriousViolations(page));
    } finally {
      await context.close();
    }
  });
}

describe("the keyboard", () => {
  for (const viewport of VIEWPORTS) {
    it(`reaches every control of the header and the message box with Tab on a ${viewport.name}`, async () => {
      const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        await signInWithDevKey(page, worker.url);
        const controls = await page
          .locator(".top")
          .evaluate((header) =>
            [...header.querySelectorAll("button, select, a")]
              .filter((control) => control.getClientRects().length > 0)
              .map((control) => control.id || (control.textContent ?? "").trim()),
          );
        // From the page's first stop (its skip link), Tab by Tab until the message box's Send button (or a bound).
        await page.locator("a.skip").focus();
        const reached: string[] = [];
        for (let press = 0; press < 60 && !reached.includes("send"); press++) {
          await page.keyboard.press("Tab");
          reached.push(
            await page.evaluate(() => {
              const focused = document.activeElement;
              return focused ? focused.id || (focused.textContent ?? "").trim() : "";
            }),
          );
        }
        assert.deepEqual(
          [...controls, "composer-input", "send"].filter((control) => !reached.includes(control)),
          [],
          `not reached by Tab; reached: ${JSON.stringify(reached)}`,
        );
      } finally {
        await context.close();
      }
    });
  }
});

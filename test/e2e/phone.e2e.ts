// The console and the admin page on a phone (390x844), in a real browser (Debian's Chromium) against `wrangler dev`:
// a one-row header, the modes panel folded until its toggle opens it, wide tables and code scrolling inside their
// own box (never the page), table headers whole words on one line, the admin keys' actions on the screen.
// Screenshots go to test-results/e2e/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { type ScriptedUpstream, startScriptedUpstream } from "../upstream/scripted-upstream.ts";
import {
  adminPageReady,
  collectProblems,
  completedTurns,
  launchChromium,
  scriptedMode,
  signInWithDevKey,
  waitForTurnAfter,
} from "./support.ts";

const SHOTS = "test-results/e2e";
const PHONE = { width: 390, height: 844 };

/** A table wider than a phone, and a line of code longer than one. */
const WIDE_ANSWER = [
  "Here are the routes:",
  "",
  "| Step | Route | Provider | Model | Fallbacks | Input price | Output price | Region |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
  "| 1 | default | openai_compatible | gpt-4o-mini-2024-07-18 | steady, backup | 0.15 | 0.60 | europe-west |",
  "| 2 | steady | anthropic | claude-3-5-haiku-latest | default | 0.80 | 4.00 | us-east |",
  "",
  "```js",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript the answer shows, not a template of this file.
  "const route = await fetch(`${baseUrl}/admin/model-routes/${encodeURIComponent(name)}`, { headers: { authorization: `Bearer ${key}` } });",
  "```",
].join("\n");

let worker: LocalWorker;
let upstream: ScriptedUpstream;
let browser: Browser;

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

/** Sends a message and waits until its turn has completed and the page has redrawn the session. */
async function say(page: Page, text: string): Promise<void> {
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill(text);
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
}

/** Each header cell's text, how many lines it takes and whether its text is wider than the cell. */
function headerCells(table: Locator): Promise<{ text: string; lines: number; clipped: boolean }[]> {
  return table.locator("th").evaluateAll((cells) =>
    cells.map((cell) => {
      const range = document.createRange();
      range.selectNodeContents(cell);
      const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
      return { text: cell.textContent ?? "", lines, clipped: cell.scrollWidth > cell.clientWidth };
    }),
  );
}

describe("the console on a phone (390x844)", () => {
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    context = await browser.newContext({ viewport: PHONE });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    collectProblems(page, problems);
    await signInWithDevKey(page, worker.url);
    await say(page, "show me how aptix works");
  });

  after(async () => {
    await context?.close();
  });

  it("keeps the header to one row of controls", async () => {
    const boxes = await page.locator(".top").evaluate((header) =>
      [...header.querySelectorAll("button, select, a")]
        .filter((control) => control.getClientRects().length > 0)
        .map((control) => {
          const rect = control.getBoundingClientRect();
          return { name: control.id || (control.textContent ?? ""), top: rect.top, bottom: rect.bottom };
        }),
    );
    // The mode picker and its button, the Modes toggle and the Menu button (the page's actions fold behind it).
    assert.ok(boxes.length >= 4, `the header's controls: ${JSON.stringify(boxes)}`);
    const first = boxes[0];
    assert.ok(first);
    // Every control's middle is within the first one's height: one row, whatever their heights.
    const offRow = boxes.filter(
      (box) => (box.top + box.bottom) / 2 < first.top || (box.top + box.bottom) / 2 > first.bottom,
    );
    assert.deepEqual(offRow, [], "controls on another row");
    const header = await page.locator(".top").boundingBox();
    assert.ok(header && header.height < 2 * (first.bottom - first.top), `the header is ${header?.height}px high`);
  });

  it("opens every header action from the Menu button, each one tap away on the screen", async () => {
    const menu = page.locator("#open-menu");
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    assert.equal(await page.locator("#open-workflows").isVisible(), false, "folded until the menu opens");
    await menu.click();
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    const actions = await page.locator("#header-actions").evaluate((box) =>
      [...box.querySelectorAll("button, a")]
        .filter((action) => action.getClientRects().length > 0)
        .map((action) => {
          const rect = action.getBoundingClientRect();
          return { name: action.textContent?.trim(), left: rect.left, right: rect.right, bottom: rect.bottom };
        }),
    );
    assert.deepEqual(
      actions.map((action) => action.name),
      ["Workflows", "Schedules", "Memory", "Connected apps", "API reference", "Admin", "Sign out"],
    );
    assert.deepEqual(
      actions.filter((action) => action.left < 0 || action.right > PHONE.width || action.bottom > PHONE.height),
      [],
      "actions past the screen's edge",
    );
    await page.screenshot({ path: `${SHOTS}/phone-console-menu.png` });
    await page.locator("#open-workflows").click();
    await page.locator("#workflow-dialog").waitFor({ state: "visible" });
    assert.equal(await menu.getAttribute("aria-expanded"), "false", "choosing an action folds the menu");
    await page.locator("#close-workflows").click();
  });

  it("folds the open menu with Esc, the focus back on its button", async () => {
    const menu = page.locator("#open-menu");
    await menu.click();
    await page.locator("#open-workflows").waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    assert.equal(await page.locator("#open-workflows").isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.id), "open-menu");
  });

  it("fits the message box's placeholder in the box", async () => {
    const fit = await page.locator("#composer-input").evaluate((box) => {
      const input = box as HTMLTextAreaElement;
      const style = getComputedStyle(input);
      const context = document.createElement("canvas").getContext("2d");
      if (!context) return { text: 0, room: 0 };
      context.font = `${style.fontSize} ${style.fontFamily}`;
      const room = input.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight);
      return { text: context.measureText(input.placeholder).width, room };
    });
    assert.ok(fit.text > 0 && fit.text <= fit.room, `the placeholder is ${fit.text}px in ${fit.room}px`);
  });

  it("scales a diagram to the conversation's width", async () => {
    const diagram = page.locator("#conversation figure.diagram").first();
    await diagram.locator("svg").waitFor();
    const sizes = await diagram.evaluate((figure) => ({
      figureScrolls: figure.scrollWidth > figure.clientWidth,
      svgRight: figure.querySelector("svg")?.getBoundingClientRect().right ?? Number.POSITIVE_INFINITY,
      figureRight: figure.getBoundingClientRect().right,
    }));
    assert.equal(sizes.figureScrolls, false, "the diagram is drawn whole, not scrolled");
    assert.ok(sizes.svgRight <= sizes.figureRight + 0.5, `the diagram ends at ${sizes.svgRight}px`);
  });

  it("starts with the modes panel folded and the chat first", async () => {
    const toggle = page.locator("#toggle-side");
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    assert.equal(await page.locator("#modes-panel").isVisible(), false);
    const composer = await page.locator("#composer-input").boundingBox();
    assert.ok(composer && composer.y + composer.height <= PHONE.height, "the message box is on the screen");
    // What stays of the panel (the artifacts) comes after the chat.
    const chat = await page.locator("section.chat").boundingBox();
    const panel = await page.locator("#side-panel").boundingBox();
    assert.ok(chat && panel && panel.y > chat.y, "the panel after the chat");
  });

  it("opens the modes panel with its toggle in the header, and folds it again", async () => {
    const toggle = page.locator("#toggle-side");
    await toggle.focus();
    await page.keyboard.press("Enter");
    assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    await page.locator("#modes-panel dt").first().waitFor({ state: "visible" });
    assert.match(await page.locator("#modes-panel").innerText(), /General Chat/);
    // Open, the panel comes first, right under the header.
    const chat = await page.locator("section.chat").boundingBox();
    const panel = await page.locator("#side-panel").boundingBox();
    assert.ok(chat && panel && panel.y < chat.y, "the open panel above the chat");
    await page.screenshot({ path: `${SHOTS}/phone-console-modes-open.png` });
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    assert.equal(await page.locator("#modes-panel").isVisible(), false);
  });

  it("keeps a table's headers whole words on one line", async () => {
    const cells = await headerCells(page.locator("#conversation .markdown table").first());
    assert.deepEqual(
      cells.map((cell) => cell.text),
      ["Step", "Where", "What happens"],
    );
    assert.deepEqual(
      cells.filter((cell) => cell.lines !== 1 || cell.clipped),
      [],
      "headers broken or clipped",
    );
  });

  it("scrolls a wide table and a long line of code inside their boxes, not the page", async () => {
    await page.locator("#mode-picker").selectOption("scripted");
    await page.locator("#mode-form button[type=submit]").click();
    await page.waitForFunction(() => document.querySelector("#current-mode")?.textContent === "Scripted");
    const script = upstream.createScript([{ type: "completion", content: WIDE_ANSWER }]);
    await say(page, `Which routes are there? ${script.marker}`);
    const answer = page.locator("#conversation > li.message.assistant").last();
    const box = answer.locator(".table-box");
    const table = await box.evaluate((element) => ({
      scrolls: element.scrollWidth > element.clientWidth,
      right: element.getBoundingClientRect().right,
    }));
    assert.ok(table.scrolls, "the table is wider than its box");
    assert.ok(table.right <= PHONE.width, `the table's box ends at ${table.right}px`);
    const code = await answer.locator("pre.code-block").evaluate((element) => ({
      scrolls: element.scrollWidth > element.clientWidth,
      right: element.getBoundingClientRect().right,
      lines: (() => {
        const range = document.createRange();
        range.selectNodeContents(element.querySelector("code") ?? element);
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
      })(),
    }));
    assert.ok(code.scrolls, "the code is wider than its block");
    assert.ok(code.right <= PHONE.width, `the code block ends at ${code.right}px`);
    assert.equal(code.lines, 1, "the one line of code is drawn on one line, not wrapped");
    assert.deepEqual(
      (await headerCells(answer.locator("table"))).filter((cell) => cell.lines !== 1 || cell.clipped),
      [],
      "headers broken or clipped",
    );
    await page.screenshot({ path: `${SHOTS}/phone-console-wide-answer.png`, fullPage: true });
  });

  it("never scrolls the page sideways", async () => {
    await page.locator("#conversation .table-box").nth(1).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `the page is ${width}px wide`);
    assert.deepEqual(problems, []);
  });
});

describe("the admin page on a phone (390x844)", () => {
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    context = await browser.newContext({ viewport: PHONE });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await signInWithDevKey(page, worker.url);
    await page.goto(`${worker.url}/admin.html`);
    await adminPageReady(page);
    await page.locator("#keys-body tr").first().waitFor();
    await page.locator("#usage-chart canvas").waitFor();
    await page.screenshot({ path: `${SHOTS}/phone-admin.png`, fullPage: true });
  });

  after(async () => {
    await context?.close();
  });

  it("never scrolls the page sideways", async () => {
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `the page is ${width}px wide`);
  });

  it("shows each key's actions on the screen", async () => {
    const actions = await page.locator("#keys-body button").evaluateAll((buttons) =>
      buttons.map((button) => {
        const rect = button.getBoundingClientRect();
        return { name: button.getAttribute("aria-label"), left: rect.left, right: rect.right };
      }),
    );
    assert.ok(actions.length >= 2, `the keys' buttons: ${JSON.stringify(actions)}`);
    assert.deepEqual(
      actions.filter((action) => action.left < 0 || action.right > PHONE.width),
      [],
      "buttons past the screen's edge",
    );
  });

  it("keeps every table header whole words on one line", async () => {
    await page.locator("details:has(#usage-table) > summary").click();
    const broken: { table: string; text: string }[] = [];
    for (const table of await page.locator("#admin table").all()) {
      // The stacked tables (keys, people) name each cell's column beside it; their header row is for screen readers.
      if (await table.evaluate((element) => (element.querySelector("thead")?.getBoundingClientRect().height ?? 0) <= 1))
        continue;
      const label = (await table.getAttribute("id")) ?? (await table.locator("caption").innerText());
      for (const cell of await headerCells(table))
        if (cell.lines !== 1 || cell.clipped) broken.push({ table: label, text: cell.text });
    }
    assert.deepEqual(broken, []);
  });
});

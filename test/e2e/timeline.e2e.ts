// A turn's waterfall in the console (Debian's Chromium driven by playwright-core, against the Worker under
// `wrangler dev` with the offline demo model): opened from an answer, each bar where the timeline route places its
// step (left at offsetMs, as wide as durationMs, on the turn's axis), its figures on hover and on keyboard focus,
// closed with Esc; and the admin page's link from a model call to its turn. Screenshots go to test-results/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { collectProblems, completedTurns, launchChromium, signInWithDevKey, waitForTurnAfter } from "./support.ts";

const SHOTS = "test-results/e2e";
/** The bars' least width (styles.css, .timeline-bar's min-width): an instant is a mark one can see and focus. */
const MIN_BAR_PX = 4;
/** Sub-pixel layout: a bar may sit this far from where the figures put it. */
const TOLERANCE_PX = 1.5;

interface Step {
  kind: string;
  name: string;
  offsetMs: number;
  durationMs: number;
  inputTokens?: number;
  outputTokens?: number;
  route?: string;
}

interface Timeline {
  status: string;
  durationMs: number;
  traceIds: string[];
  steps: Step[];
}

const KIND_LABELS: Record<string, string> = {
  run: "Run",
  model_call: "Model call",
  tool_call: "Tool call",
  wait: "Wait",
  failover: "Failover",
  restart: "Restart",
};

/** A duration as the page writes it (public/js/timeline.js). */
const formatMs = (ms: number) =>
  ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;

let worker: LocalWorker;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];

/** The turn whose waterfall the tests open, and its timeline as the route answers it. */
let sessionId = "";
let turnId = "";
let timeline: Timeline;

async function api(path: string): Promise<unknown> {
  const response = await fetch(`${worker.url}${path}`, { headers: { authorization: "Bearer dev-key" } });
  assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`);
  return response.json();
}

const bars = () => page.locator("#timeline-dialog .timeline-bar");
const tip = () => page.locator("#timeline-tip");

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  worker = await startLocalWorker();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  collectProblems(page, problems);
  await signInWithDevKey(page, worker.url);
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill("what modes are there?");
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
  sessionId = await page.locator("#session-id").innerText();
  turnId = (await page.locator("#conversation .timeline-open").last().getAttribute("data-turn-id")) ?? "";
  timeline = (await api(`/context/sessions/${sessionId}/turns/${turnId}/timeline`)) as Timeline;
});

after(async () => {
  await context?.close();
  await browser?.close();
  await worker?.stop();
});

describe("a turn's waterfall", () => {
  it("is recorded for the answer's turn, with its model call", () => {
    assert.equal(timeline.status, "completed");
    assert.ok(
      timeline.steps.some((s) => s.kind === "model_call"),
      `a model_call step, got ${JSON.stringify(timeline.steps.map((s) => s.kind))}`,
    );
  });

  it("opens from the answer's Timeline button with a bar per step", async () => {
    await page.locator("#conversation .timeline-open").last().click();
    await page.locator("#timeline-dialog[open]").waitFor();
    assert.equal(await bars().count(), timeline.steps.length);
    const kinds = await bars().evaluateAll((all) => all.map((b) => b.getAttribute("data-kind")));
    assert.deepEqual(
      kinds,
      timeline.steps.map((s) => s.kind),
    );
  });

  it("places each bar at its step's offset, as wide as its duration, on the turn's axis", async () => {
    const total = Math.max(1, timeline.durationMs, ...timeline.steps.map((s) => s.offsetMs + s.durationMs));
    const boxes = await bars().evaluateAll((all) =>
      all.map((bar) => {
        const track = bar.parentElement?.getBoundingClientRect();
        const own = bar.getBoundingClientRect();
        return { trackLeft: track?.left ?? 0, trackWidth: track?.width ?? 0, left: own.left, width: own.width };
      }),
    );
    for (const [i, step] of timeline.steps.entries()) {
      const box = boxes[i];
      assert.ok(box && box.trackWidth > 100, `bar ${i} has a track to sit on`);
      const left = box.trackLeft + (step.offsetMs / total) * box.trackWidth;
      const width = Math.max(MIN_BAR_PX, (step.durationMs / total) * box.trackWidth);
      assert.ok(
        Math.abs(box.left - left) <= TOLERANCE_PX,
        `bar ${i} (${step.kind}) at ${box.left}px, expected ${left}px`,
      );
      assert.ok(
        Math.abs(box.width - width) <= TOLERANCE_PX,
        `bar ${i} (${step.kind}) ${box.width}px wide, expected ${width}px`,
      );
    }
  });

  it("names each bar's kind, step, duration and tokens for screen readers", async () => {
    const labels = await bars().evaluateAll((all) => all.map((b) => b.getAttribute("aria-label") ?? ""));
    for (const [i, step] of timeline.steps.entries()) {
      const label = labels[i] ?? "";
      assert.ok(label.startsWith(`${KIND_LABELS[step.kind]} ${step.name}, ${formatMs(step.durationMs)}`), label);
      if (step.inputTokens !== undefined) {
        assert.ok(label.endsWith(`tokens ${step.inputTokens} in, ${step.outputTokens ?? 0} out`), label);
      }
    }
  });

  it("focuses the first bar and moves through the bars with Tab, each showing its figures", async () => {
    for (const [i, step] of timeline.steps.entries()) {
      if (i > 0) await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => document.activeElement?.getAttribute("data-step"));
      assert.equal(focused, String(i));
      await tip().waitFor({ state: "visible" });
      const text = await tip().innerText();
      assert.ok(text.startsWith(`${KIND_LABELS[step.kind]}: ${step.name}`), text);
      if (step.kind === "model_call") {
        assert.ok(text.includes(`Tokens: ${step.inputTokens ?? 0} in, ${step.outputTokens ?? 0} out`), text);
        assert.ok(text.includes(`Route ${step.route}`), text);
      }
    }
  });

  it("shows a bar's figures when the pointer is on it", async () => {
    const last = timeline.steps.length - 1;
    // Away from the bars first: the tooltip the keyboard showed is gone, and the pointer brings one back.
    await page.locator("#close-timeline").focus();
    await tip().waitFor({ state: "hidden" });
    await bars().nth(last).hover();
    await page.waitForFunction(
      (n) => document.querySelector("#timeline-tip")?.getAttribute("data-step") === n,
      String(last),
    );
    assert.ok((await tip().innerText()).includes(timeline.steps[last]?.name ?? "?"));
  });

  it("shows the turn's trace ids, and a legend of the kinds drawn", async () => {
    const traces = (await page.locator("#timeline-dialog .timeline-traces").getAttribute("data-trace-ids")) ?? "";
    assert.deepEqual(traces.split(" ").filter(Boolean), timeline.traceIds);
    const legend = await page.locator("#timeline-dialog .timeline-legend li").allInnerTexts();
    assert.deepEqual(
      legend.map((l) => l.trim()),
      [...new Set(timeline.steps.map((s) => KIND_LABELS[s.kind]))],
    );
    await page.locator('#timeline-dialog .timeline-bar[data-kind="model_call"]').first().focus();
    await page.screenshot({ path: `${SHOTS}/timeline.png` });
  });

  it("closes with Esc, the focus back on the answer's Timeline button", async () => {
    await page.keyboard.press("Escape");
    await page.locator("#timeline-dialog").waitFor({ state: "hidden" });
    const focused = await page.evaluate(() => document.activeElement?.getAttribute("data-turn-id"));
    assert.equal(focused, turnId);
  });

  it("opens from the admin page's link of the turn's model call", async () => {
    await page.goto(`${worker.url}/admin.html`);
    const link = page.locator(`#calls-body a.turn-link[data-turn-id="${turnId}"]`).first();
    await link.click();
    await page.locator("#timeline-dialog[open]").waitFor();
    assert.equal(await page.locator("#session-id").innerText(), sessionId);
    assert.equal(await bars().count(), timeline.steps.length);
    // The link is used once: a reload of the console does not open the waterfall again.
    assert.equal(new URL(page.url()).search, "");
  });

  it("logged no console errors or warnings", () => {
    assert.deepEqual(problems, []);
  });
});

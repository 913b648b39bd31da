// npm run bench:console — what the browser console costs the person who opens it, in Debian's Chromium (headless,
// driven by playwright-core, as the browser tests run it) against one Worker under `wrangler dev`:
//   first load   a fresh browser context (empty cache) each run opens `/` and signs in with the local dev-key as
//                soon as the form is there (submitted from inside the page, see submitSignIn). Times are the
//                page's own clock from navigation start: the sign-in form shown, the sign-in submitted, and
//                signed in (#app shown, the composer enabled; the DOM change, which the page's MutationObserver
//                sees at once, not the paint). Baseline in the same run, the runs taking turns: a fresh context
//                opening a small static file of the same server (/vendor/markdown-it/LICENSE.txt), navigation
//                start to the end of its load event.
//   bytes        what came over the wire, from the DevTools protocol: Network.loadingFinished's encodedDataLength
//                (response headers and body as received, plus any redirect's), per request, split into
//                JavaScript (resource type Script, or a JavaScript MIME type) and everything else; WebSocket
//                frames are not counted. `wrangler dev` gzips the static assets, so these are gzipped bytes.
//                "To the sign-in form": the requests the page made before the sign-in was submitted (the static
//                load, the Markdown libraries markdown.js fetches at load among them); "to signed in": those and
//                every request made until the composer was ready (the API calls).
//   JS budget    the JavaScript of the first load (highlight.js and mermaid are lazy and must not be in it) is
//                held to 400 KiB as files and 140 KiB gzipped, both computed here from the files the page asked
//                for (zlib level 6, gzip's default; a deployment may send brotli, smaller still), so the figure
//                does not depend on what the server compresses. Over budget, the script exits 1.
//   Markdown     an answer of about 60 KB (40 sections: a heading, a paragraph, a 5-row table and a 15-line
//                ```ts block each) drawn in the signed-in page by renderMarkdown (parse, sanitise, insert, copy
//                buttons) and a forced layout; then, separately, the time until every `pre code` is highlighted
//                (highlight.js runs after the render, once its lazy import has resolved: "cold" is the first
//                render of each first-load page, which fetches highlight.js; "warm" the later ones). Baseline
//                in the same page and run, the two taking turns: the same text as `textContent`, plus a forced
//                layout.
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { benchConfig, sourceSnapshot } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile, ratio, table } from "./support/stats.ts";

/** seeds/local.sql's key, which the local database of `startLocalWorker` holds. */
const KEY = "dev-key";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const VIEWPORT = { width: 1280, height: 860 };
const LOADS = Number(process.env.BENCH_LOADS ?? 10);
const RENDERS = Number(process.env.BENCH_RENDERS ?? 30);
const WARMUP_LOADS = 2;
const WARMUP_RENDERS = 5;
const STATIC_FILE = "/vendor/markdown-it/LICENSE.txt";
const KIB = 1024;
const BUDGET = { raw: 400 * KIB, gzip: 140 * KIB };
/** Fetched when an answer needs them, never at first load. */
const LAZY = ["/vendor/highlight/", "/vendor/mermaid/"];

// --- The page's side -------------------------------------------------------------------------------------------
// The functions below run in the browser (Playwright hands them over as source). This file is checked against
// Node's types (tsconfig.node.json), not the DOM's, so the few page globals they use are declared here.

interface PageElement {
  hidden: boolean;
  disabled?: boolean;
  className: string;
  textContent: string | null;
  value: string;
  readonly offsetHeight: number;
  readonly isConnected: boolean;
  readonly classList: { contains(token: string): boolean };
  append(...nodes: PageElement[]): void;
  after(...nodes: PageElement[]): void;
  replaceChildren(): void;
  requestSubmit(): void;
  querySelectorAll(selectors: string): ArrayLike<PageElement>;
}

interface PageMarks {
  /** ms from navigation start; NaN until it happens. */
  form: number;
  submitted: number;
  ready: number;
  formShown: Promise<void>;
}

declare const document: {
  getElementById(id: string): PageElement | null;
  createElement(tag: string): PageElement;
  addEventListener(type: string, listener: () => void, capture?: boolean): void;
};
declare class MutationObserver {
  constructor(callback: () => void);
  observe(target: unknown, options: { subtree?: boolean; attributes?: boolean; attributeFilter?: string[] }): void;
  disconnect(): void;
}
declare const window: { consoleBench?: PageMarks; benchBox?: PageElement };

interface MarkdownModule {
  renderMarkdown(target: PageElement, text: string): void;
  markdownReady: Promise<void>;
}

/** An init script: notes when the sign-in form shows, when it is submitted, and when the console is ready. */
function watchPage(): void {
  let shown = () => {};
  const marks: PageMarks = {
    form: Number.NaN,
    submitted: Number.NaN,
    ready: Number.NaN,
    formShown: new Promise((resolve) => {
      shown = resolve;
    }),
  };
  window.consoleBench = marks;
  const check = () => {
    const form = document.getElementById("sign-in");
    const app = document.getElementById("app");
    const composer = document.getElementById("composer-input");
    if (Number.isNaN(marks.form) && form && !form.hidden) {
      marks.form = performance.now();
      shown();
    }
    if (Number.isNaN(marks.ready) && app && !app.hidden && composer && !composer.disabled) {
      marks.ready = performance.now();
    }
  };
  // The console shows and hides its parts with the `hidden` attribute; an observer hears each change at once.
  new MutationObserver(check).observe(document, {
    subtree: true,
    attributes: true,
    attributeFilter: ["hidden", "disabled"],
  });
  document.addEventListener("DOMContentLoaded", check);
  document.addEventListener(
    "submit",
    () => {
      if (Number.isNaN(marks.submitted)) marks.submitted = performance.now();
    },
    true,
  );
}

type RenderWay = "markdown" | "text";

interface RenderResult {
  /** The drawing and a forced layout, ms. */
  ms: number;
  /** From the start until every `pre code` has highlight.js's class, ms (NaN for text, or after 10 s). */
  highlightedMs: number;
  codeBlocks: number;
  tables: number;
  copyButtons: number;
}

/** Draws `text` one way into a message box beside the conversation, timed with the page's clock. */
async function renderInPage({ text, way }: { text: string; way: RenderWay }): Promise<RenderResult> {
  const url = "/js/markdown.js";
  const { renderMarkdown, markdownReady } = (await import(url)) as MarkdownModule;
  await markdownReady;
  let box = window.benchBox;
  if (!box?.isConnected) {
    const message = document.createElement("div");
    message.className = "message assistant";
    box = document.createElement("div");
    message.append(box);
    document.getElementById("conversation")?.after(message);
    window.benchBox = box;
  }
  box.className = "content";
  box.replaceChildren();
  box.offsetHeight;
  const started = performance.now();
  if (way === "text") box.textContent = text;
  else renderMarkdown(box, text);
  box.offsetHeight;
  const ms = performance.now() - started;
  const codes = Array.from(box.querySelectorAll("pre code"));
  const counts = {
    codeBlocks: codes.length,
    tables: box.querySelectorAll("table").length,
    copyButtons: box.querySelectorAll("button.copy").length,
  };
  if (way === "text") return { ms, highlightedMs: Number.NaN, ...counts };
  const lit = () => codes.every((code) => code.classList.contains("hljs"));
  const highlightedMs = await new Promise<number>((resolve) => {
    if (lit()) return resolve(performance.now() - started);
    const observer = new MutationObserver(() => {
      if (!lit()) return;
      observer.disconnect();
      resolve(performance.now() - started);
    });
    observer.observe(box, { subtree: true, attributes: true, attributeFilter: ["class"] });
    setTimeout(() => {
      observer.disconnect();
      resolve(Number.NaN);
    }, 10_000);
  });
  return { ms, highlightedMs, ...counts };
}

// --- The Node side ---------------------------------------------------------------------------------------------

/** A long answer, the same every run: 40 sections of a heading, a paragraph, a table and a TypeScript block. */
function longAnswer(sections = 40): string {
  const parts = ["# How a turn runs, step by step\n"];
  for (let i = 1; i <= sections; i++) {
    parts.push(
      `## ${i}. Step ${i}: the session calls \`tool_${i}\`\n`,
      `In step ${i} the agent loop reads the session's state, builds the model request with the mode's tools and ` +
        `sends it **through the key's route**; the answer is streamed to every socket as \`assistant_delta\` ` +
        `frames, written to the event log first. See [the protocol](https://example.com/protocol#step-${i}) ` +
        `for the frames, and _the approvals_ section for calls that wait for a person (${i * 7} ms budget). ` +
        `When a tool asks for approval the turn pauses, its pending calls are stored with the session, and the ` +
        `console shows them in one dialog; a decision resumes the loop where it stopped, a refusal is a result.\n`,
      "| call | tool | status | ms | note |",
      "| --- | --- | --- | ---: | --- |",
      ...[1, 2, 3, 4, 5].map(
        (row) =>
          `| ${i}.${row} | \`tool_${(i + row) % 9}\` | ${row % 2 ? "done" : "waiting"} | ${i * row} | row ${row} of the step's calls |`,
      ),
      "",
      "```ts",
      `// Step ${i}: a tool and its handler`,
      `interface Step${i}Input {`,
      "  sessionId: string;",
      "  attempt: number;",
      "  labels: readonly string[];",
      "}",
      "",
      `export async function runStep${i}(input: Step${i}Input, signal: AbortSignal): Promise<number> {`,
      "  const started = performance.now();",
      "  for (const label of input.labels) {",
      `    if (signal.aborted) throw new Error(\`step ${i} cancelled at \${label}\`);`,
      `    await fetch(\`/context/sessions/\${input.sessionId}/steps/${i}?label=\${encodeURIComponent(label)}\`);`,
      "  }",
      `  return performance.now() - started + input.attempt * ${i};`,
      "}",
      "```\n",
    );
  }
  return parts.join("\n");
}

interface Transfer {
  url: string;
  javascript: boolean;
  /** Bytes received: headers and body, and those of any redirect before it. */
  bytes: number;
  finished: boolean;
}

interface Bytes {
  javascript: number;
  other: number;
}

/** Every HTTP request of the page, by DevTools request id, with the bytes it brought over the wire. */
async function watchNetwork(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  const transfers = new Map<string, Transfer>();
  cdp.on("Network.requestWillBeSent", (event) => {
    const redirected = transfers.get(event.requestId)?.bytes ?? 0;
    transfers.set(event.requestId, {
      url: event.request.url,
      javascript: event.type === "Script",
      bytes: redirected + (event.redirectResponse?.encodedDataLength ?? 0),
      finished: false,
    });
  });
  cdp.on("Network.responseReceived", (event) => {
    const transfer = transfers.get(event.requestId);
    if (transfer) transfer.javascript ||= event.response.mimeType.includes("javascript");
  });
  cdp.on("Network.loadingFinished", (event) => {
    const transfer = transfers.get(event.requestId);
    if (!transfer) return;
    transfer.bytes += event.encodedDataLength;
    transfer.finished = true;
  });
  cdp.on("Network.loadingFailed", (event) => {
    const transfer = transfers.get(event.requestId);
    if (transfer) transfer.finished = true;
  });
  await cdp.send("Network.enable");
  return {
    /**
     * The requests the page has made by the time `expression` (evaluated in the page, and awaited) is done. Its
     * answer comes through the same DevTools session as the network's events, after those of every request
     * started before it.
     */
    async started(expression = "0"): Promise<string[]> {
      const { exceptionDetails } = await cdp.send("Runtime.evaluate", { expression, awaitPromise: true });
      if (exceptionDetails) throw new Error(`${expression}: ${exceptionDetails.exception?.description}`);
      return [...transfers.entries()].filter(([, t]) => t.url.startsWith("http")).map(([id]) => id);
    },
    /** Waits until those requests have finished, and returns them. */
    async settled(ids: readonly string[]): Promise<Transfer[]> {
      const deadline = Date.now() + 30_000;
      const of = () => ids.map((id) => transfers.get(id)).filter((t): t is Transfer => t !== undefined);
      while (of().some((t) => !t.finished)) {
        if (Date.now() > deadline) {
          throw new Error(
            `still loading: ${of()
              .filter((t) => !t.finished)
              .map((t) => t.url)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return of();
    },
  };
}

function bytesOf(transfers: readonly Transfer[]): Bytes {
  const sum = (javascript: boolean) =>
    transfers.filter((t) => t.javascript === javascript).reduce((total, t) => total + t.bytes, 0);
  return { javascript: sum(true), other: sum(false) };
}

/** `promise`, or an error naming `what` after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Errors and warnings the pages log, and uncaught errors: printed at the end. */
const problems = new Set<string>();

async function freshPage(browser: Browser, kind: string) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  await context.addInitScript(watchPage);
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") {
      problems.add(`${kind}: ${message.type()}: ${message.text()} (${message.location().url})`);
    }
  });
  page.on("pageerror", (error) => problems.add(`${kind}: pageerror: ${error.message}`));
  const network = await watchNetwork(context, page);
  return { context, page, network };
}

/** ms from navigation start to the end of the load event of the page now open. */
function loadEventEnd(page: Page): Promise<number> {
  // The navigation entry's duration ends with its load event (Node's types do not list "navigation").
  return page.evaluate(
    () =>
      performance.getEntries().find((e: { entryType: string }) => e.entryType === "navigation")?.duration ?? Number.NaN,
  );
}

/** The baseline: a fresh context opening a small static file. */
async function staticLoad(browser: Browser, url: string): Promise<number> {
  const { context, page } = await freshPage(browser, "static file");
  try {
    const response = await page.goto(`${url}${STATIC_FILE}`);
    if (response?.status() !== 200) throw new Error(`${STATIC_FILE} answered ${response?.status()}`);
    return await loadEventEnd(page);
  } finally {
    await context.close();
  }
}

/**
 * In the page: the key typed and the form submitted, as Enter in the key's box does. The first loads sign in this
 * way: Playwright's fill and press wait for the box to be stable over animation frames first (about 100 ms here),
 * which would be the script's time, not the page's.
 */
function submitSignIn(key: string): void {
  const input = document.getElementById("api-key");
  const form = document.getElementById("sign-in-form");
  if (!input || !form) throw new Error("no sign-in form");
  input.value = key;
  form.requestSubmit();
}

/** Signs in as a person does: the key in its box, then Enter. */
async function signIn(page: Page): Promise<void> {
  await page.locator("#api-key").fill(KEY);
  await page.keyboard.press("Enter");
  await page.locator("#app").waitFor({ state: "visible" });
  await page.locator("#composer-input:enabled").waitFor({ state: "visible" });
}

interface FirstLoad {
  formMs: number;
  submittedMs: number;
  readyMs: number;
  loadEventMs: number;
  toForm: Bytes;
  toSignedIn: Bytes;
  /** The paths of the JavaScript loaded by the time the console was ready. */
  scripts: string[];
  /** The first render of the long answer in that page (it fetches highlight.js). */
  cold: RenderResult;
  /** What that render fetched (highlight.js), and whether mermaid came too. */
  lazy: Transfer[];
}

/** A fresh context opens the console, signs in at once, then draws the long answer once. */
async function firstLoad(browser: Browser, url: string, text: string): Promise<FirstLoad> {
  const { context, page, network } = await freshPage(browser, "console (first load)");
  try {
    await page.goto(`${url}/`, { waitUntil: "commit" });
    // Straight through the DevTools session, which is quicker than Playwright's evaluate: the form shown, then
    // the sign-in submitted. Between the two: a round trip, and whatever the page's main thread is busy with then
    // (the Markdown libraries, which arrive about then, being compiled), as a person pressing Enter would wait.
    const beforeSignIn = await within(30_000, "the sign-in form", network.started("window.consoleBench.formShown"));
    await network.started(`(${submitSignIn})(${JSON.stringify(KEY)})`);
    await page.locator("#app").waitFor({ state: "visible" });
    await page.locator("#composer-input:enabled").waitFor({ state: "visible" });
    const untilReady = await network.started();
    const marks = await page.evaluate(() => ({
      form: window.consoleBench?.form ?? Number.NaN,
      submitted: window.consoleBench?.submitted ?? Number.NaN,
      ready: window.consoleBench?.ready ?? Number.NaN,
    }));
    const toForm = await network.settled(beforeSignIn);
    const toSignedIn = await network.settled(untilReady);
    const loadEventMs = await loadEventEnd(page);
    const cold = await page.evaluate(renderInPage, { text, way: "markdown" as const });
    const lazy = await network.settled((await network.started()).filter((id) => !untilReady.includes(id)));
    return {
      formMs: marks.form,
      submittedMs: marks.submitted,
      readyMs: marks.ready,
      loadEventMs,
      toForm: bytesOf(toForm),
      toSignedIn: bytesOf(toSignedIn),
      scripts: toSignedIn.filter((t) => t.javascript).map((t) => new URL(t.url).pathname),
      cold,
      lazy,
    };
  } finally {
    await context.close();
  }
}

interface Figure {
  name: string;
  values: number[];
}

const median = (values: readonly number[]) => percentile(values, 50);
const kib = (bytes: number) => `${fixed(bytes / KIB, 1)} KiB`;

async function main(): Promise<void> {
  // The libraries under public/vendor/, as `npm run dev` copies them (its predev), before the snapshot is taken.
  execFileSync(process.execPath, ["scripts/vendor-assets.mjs"], { stdio: "inherit" });
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-console-"));
  let worker: LocalWorker | null = null;
  let browser: Browser | null = null;
  const stopAll = async () => {
    await browser?.close();
    await worker?.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  let overBudget = false;
  try {
    console.log("Starting the Worker (wrangler dev, as npm start runs it) and Chromium (headless) ...");
    // The Worker and its assets from a copy of src/ and public/, so edits to the checkout during the run do not
    // restart it; the gzip sizes are of the same copy's files.
    worker = await startLocalWorker({ config: await benchConfig(tmp, true) });
    const publicDir = join(await sourceSnapshot(tmp), "public");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"],
    });
    const url = worker.url;
    const text = longAnswer();
    const answerKb = `${Math.round(Buffer.byteLength(text) / 1000)} KB`;

    // 1. First loads, the static file's and the console's taking turns.
    console.log(`First loads: ${WARMUP_LOADS} warm-up and ${LOADS} measured of each ...`);
    for (let i = 0; i < WARMUP_LOADS; i++) {
      await staticLoad(browser, url);
      await firstLoad(browser, url, text);
    }
    const statics: number[] = [];
    const loads: FirstLoad[] = [];
    for (let i = 0; i < LOADS; i++) {
      const turns = [
        async () => statics.push(await staticLoad(browser as Browser, url)),
        async () => loads.push(await firstLoad(browser as Browser, url, text)),
      ];
      for (let k = 0; k < turns.length; k++) await turns[(k + i) % turns.length]?.();
    }

    // 2. The JavaScript budget, from the files the first loads asked for.
    const scripts = [...new Set(loads.flatMap((load) => load.scripts))].sort();
    const files = await Promise.all(
      scripts.map(async (path) => {
        const body = await readFile(join(publicDir, decodeURIComponent(path)));
        return { path, raw: body.length, gzip: gzipSync(body, { level: 6 }).length };
      }),
    );
    const jsRaw = files.reduce((total, f) => total + f.raw, 0);
    const jsGzip = files.reduce((total, f) => total + f.gzip, 0);
    const eager = scripts.filter((path) => LAZY.some((prefix) => path.startsWith(prefix)));
    overBudget = jsRaw > BUDGET.raw || jsGzip > BUDGET.gzip || eager.length > 0;

    // 3. The long answer, in one signed-in page: renderMarkdown and the textContent baseline taking turns.
    console.log(`Rendering a ${answerKb} answer: ${WARMUP_RENDERS} warm-up and ${RENDERS} measured of each way ...`);
    const { context, page } = await freshPage(browser, "console (renders)");
    const renders: Record<RenderWay, RenderResult[]> = { markdown: [], text: [] };
    try {
      await page.goto(`${url}/`);
      await signIn(page);
      // The socket's first session_state redraws the session: done before the first render.
      await page.locator('#app[data-socket="open"]').waitFor({ state: "attached" });
      const ways: RenderWay[] = ["markdown", "text"];
      for (let i = 0; i < WARMUP_RENDERS + RENDERS; i++) {
        for (let k = 0; k < ways.length; k++) {
          const way = ways[(k + i) % ways.length] as RenderWay;
          // Each render's text is new (the console keeps the HTML of a text it drew): a last line tells them apart.
          const fresh = `${text}\n\nRender ${i}.`;
          const result = await page.evaluate(renderInPage, { text: fresh, way });
          if (i >= WARMUP_RENDERS) renders[way].push(result);
        }
      }
    } finally {
      await context.close();
    }
    // Every render drew the whole answer: 40 code blocks with their copy buttons, 40 tables.
    const whole = (r: RenderResult) => r.codeBlocks === 40 && r.tables === 40 && r.copyButtons === 40;
    const partial = [...renders.markdown, ...loads.map((l) => l.cold)].find((r) => !whole(r));
    if (partial) throw new Error(`the answer was not drawn whole: ${JSON.stringify(partial)}`);

    // The report.
    const staticMs = median(statics);
    const times: Figure[] = [
      { name: "static file: load event end (baseline)", values: statics },
      { name: "console: sign-in form shown", values: loads.map((l) => l.formMs) },
      { name: "console: load event end", values: loads.map((l) => l.loadEventMs) },
      { name: "console: sign-in submitted", values: loads.map((l) => l.submittedMs) },
      { name: "console: signed in, composer ready", values: loads.map((l) => l.readyMs) },
      { name: "console: the sign-in alone (submit to ready)", values: loads.map((l) => l.readyMs - l.submittedMs) },
    ];
    const textMs = median(renders.text.map((r) => r.ms));
    const drawing: Figure[] = [
      { name: "textContent + layout (baseline)", values: renders.text.map((r) => r.ms) },
      { name: "renderMarkdown + layout", values: renders.markdown.map((r) => r.ms) },
      { name: "... and all code highlighted, warm", values: renders.markdown.map((r) => r.highlightedMs) },
      { name: "... and all code highlighted, cold", values: loads.map((l) => l.cold.highlightedMs) },
    ];
    const row = (name: string, cells: string[]) => `${name.padEnd(48)}${cells.map((c) => c.padStart(12)).join("")}`;
    const figureRows = (figures: Figure[], base: number, label: string) => [
      row("ms", ["median", "min", "max", label]),
      ...figures.map((f) =>
        row(f.name, [
          fixed(median(f.values)),
          fixed(Math.min(...f.values)),
          fixed(Math.max(...f.values)),
          ratio(median(f.values), base),
        ]),
      ),
    ];
    const bytesMedian = (pick: (load: FirstLoad) => number) => median(loads.map(pick));
    const toForm = { javascript: bytesMedian((l) => l.toForm.javascript), other: bytesMedian((l) => l.toForm.other) };
    const toReady = {
      javascript: bytesMedian((l) => l.toSignedIn.javascript),
      other: bytesMedian((l) => l.toSignedIn.other),
    };
    const spread = (pick: (load: FirstLoad) => number) => {
      const values = loads.map(pick);
      return Math.max(...values) - Math.min(...values);
    };
    const lazy = loads[0]?.lazy ?? [];
    const lazyBytes = lazy.reduce((total, t) => total + t.bytes, 0);
    const mermaid = loads.some((l) => l.lazy.some((t) => t.url.includes("/vendor/mermaid/")));
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
    console.log(
      [
        "",
        `Console benchmark (wrangler dev, Chromium headless ${browser.version()}, ${new Date().toISOString().slice(0, 10)}): ` +
          `${LOADS} first loads in fresh contexts,\nthe static file's (${STATIC_FILE}) taking turns with them, after ${WARMUP_LOADS} warm-up of each.`,
        "",
        ...figureRows(times, staticMs, "/ static"),
        "",
        `bytes over the wire (median of ${LOADS}; headers included, WebSocket frames not):`,
        `  to the sign-in form   JS ${kib(toForm.javascript)}, other ${kib(toForm.other)}, total ${kib(toForm.javascript + toForm.other)}`,
        `  to signed in          JS ${kib(toReady.javascript)}, other ${kib(toReady.other)}, total ${kib(toReady.javascript + toReady.other)}`,
        `  largest difference between runs: ${spread((l) => l.toSignedIn.javascript + l.toSignedIn.other)} bytes`,
        `  then, with the first code block: ${lazy.map((t) => `${new URL(t.url).pathname} ${kib(t.bytes)}`).join(", ") || "nothing"}` +
          ` (${kib(lazyBytes)}); mermaid fetched: ${mermaid ? "YES (it should not be)" : "no"}`,
        "",
        "JavaScript at first load (the files the page asked for, as served and gzipped at level 6):",
        ...files.map((f) => `  ${f.path.padEnd(46)}${kib(f.raw).padStart(12)}${kib(f.gzip).padStart(12)}`),
        `  ${"total".padEnd(46)}${kib(jsRaw).padStart(12)}${kib(jsGzip).padStart(12)}`,
        `budget: at most ${kib(BUDGET.raw)} as served: ${verdict(jsRaw <= BUDGET.raw)}; at most ${kib(BUDGET.gzip)} gzipped: ${verdict(jsGzip <= BUDGET.gzip)}` +
          (eager.length > 0 ? `; lazy libraries loaded at first load: ${eager.join(", ")} (MISSED)` : ""),
        "",
        `Markdown: a ${answerKb} answer (40 sections: heading, paragraph, table, ts code block), ${RENDERS} renders of each way`,
        `after ${WARMUP_RENDERS} warm-up in one signed-in page; cold: the first render of each first-load page (${LOADS}).`,
        "",
        ...figureRows(drawing, textMs, "/ text"),
        "",
        "For docs/performance.md:",
        "",
        table(
          ["console (Chromium headless, wrangler dev)", "median", "min", "max", "ratio"],
          [
            ...times.map((f) => [
              `${f.name} (ms)`,
              fixed(median(f.values)),
              fixed(Math.min(...f.values)),
              fixed(Math.max(...f.values)),
              ratio(median(f.values), staticMs),
            ]),
            ...drawing.map((f) => [
              `${answerKb} answer: ${f.name} (ms)`,
              fixed(median(f.values)),
              fixed(Math.min(...f.values)),
              fixed(Math.max(...f.values)),
              ratio(median(f.values), textMs),
            ]),
            [
              "KiB to the sign-in form: JS / other",
              `${fixed(toForm.javascript / KIB, 1)} / ${fixed(toForm.other / KIB, 1)}`,
              "",
              "",
              "",
            ],
            [
              "KiB to signed in: JS / other",
              `${fixed(toReady.javascript / KIB, 1)} / ${fixed(toReady.other / KIB, 1)}`,
              "",
              "",
              "",
            ],
            [
              `JS at first load: KiB served / gzipped (budget ${BUDGET.raw / KIB} / ${BUDGET.gzip / KIB})`,
              `${fixed(jsRaw / KIB, 1)} / ${fixed(jsGzip / KIB, 1)}`,
              "",
              "",
              `${fixed(jsRaw / BUDGET.raw)} / ${fixed(jsGzip / BUDGET.gzip)} of budget`,
            ],
          ],
        ),
        "",
        problems.size > 0
          ? `The pages logged:\n${[...problems].map((p) => `  ${p}`).join("\n")}`
          : "The pages logged no errors or warnings.",
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
  if (overBudget) {
    console.error("The console's first-load JavaScript is over budget.");
    process.exitCode = 1;
  }
}

await main();

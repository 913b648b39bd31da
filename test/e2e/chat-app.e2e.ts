// The console as a chat app, in a real browser (Debian's Chromium) against `wrangler dev` as `npm start` runs
// it: Markdown with a table and code, a mermaid diagram drawn as SVG, markup a tool smuggles in staying text,
// the Content Security Policy stopping an inline script, the conversation list and switching, a reload while
// the answer streams, artifacts opened and downloaded, and dark mode. Screenshots go to test-results/e2e/.
import assert from "node:assert/strict";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { type ScriptedUpstream, startScriptedUpstream } from "../upstream/scripted-upstream.ts";
import { completedTurns, launchChromium, scriptedMode, waitForTurnAfter } from "./support.ts";

const SHOTS = "test-results/e2e";

let worker: LocalWorker;
let browser: Browser;
let upstream: ScriptedUpstream;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  worker = await startLocalWorker();
  upstream = await startScriptedUpstream();
  // Modes on a scripted model, for answers whose timing and tool calls a test decides.
  await scriptedMode(worker.url, upstream.url, {
    key: "scripted",
    displayName: "Scripted",
    tools: [],
    route: "scripted",
  });
  await scriptedMode(worker.url, upstream.url, {
    key: "scripted_tools",
    displayName: "Scripted tools",
    tools: ["agent_hello_world"],
    route: "scripted",
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await upstream?.close();
  await worker?.stop();
});

interface Opened {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions the page had. */
  problems: string[];
}

/** A fresh browser context, signed in with the dev-key. */
async function signedIn(options: { colorScheme?: "light" | "dark"; width?: number } = {}): Promise<Opened> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 },
    colorScheme: options.colorScheme ?? "light",
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.stack ?? error.message}`));
  await page.goto(worker.url);
  await page.locator("#api-key").fill("dev-key");
  await page.keyboard.press("Enter");
  await page.locator("#app").waitFor({ state: "visible" });
  return { context, page, problems };
}

/** Runs `test` in a page of its own (signed in), closed afterwards whatever happens. */
async function inFreshPage(
  test: (opened: Opened) => Promise<void>,
  options: Parameters<typeof signedIn>[0] = {},
): Promise<void> {
  const opened = await signedIn(options);
  try {
    await test(opened);
  } finally {
    await opened.context.close();
  }
}

/** Sends a message and waits until its turn has completed and the page has redrawn the session. */
async function say(page: Page, text: string): Promise<void> {
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill(text);
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
}

const lastAnswer = (page: Page) => page.locator("#conversation > li.message.assistant").last();

/** Switches the session's mode with the picker, and waits until the page has drawn the workflow's answer. */
async function switchMode(page: Page, key: string, name: string): Promise<void> {
  const ran = await page.locator("#conversation > li.message.workflow").count();
  await page.locator("#mode-picker").selectOption(key);
  await page.locator("#mode-form button[type=submit]").click();
  await page.waitForFunction((shown) => document.querySelector("#current-mode")?.textContent === shown, name);
  // The mode_changed frame comes before the workflow's own answer; a message sent in between could find the
  // session still running the workflow.
  await page.waitForFunction((n) => document.querySelectorAll("#conversation > li.message.workflow").length > n, ran);
}

describe("Markdown answers", () => {
  let opened: Opened;
  before(async () => {
    opened = await signedIn();
    await say(opened.page, "show me how aptix works");
  });
  after(async () => {
    await opened?.context.close();
  });

  it("draws a table and a highlighted code block with a copy button", async () => {
    const answer = lastAnswer(opened.page);
    assert.deepEqual(
      await answer.locator("table th").allInnerTexts(),
      ["Step", "Where", "What happens"],
      "the table's header",
    );
    assert.equal(await answer.locator("table tbody tr").count(), 3);
    const code = answer.locator("pre > code.language-js");
    await opened.page.waitForFunction(() =>
      document.querySelector("pre > code.language-js")?.classList.contains("hljs"),
    );
    assert.ok((await code.locator("span").count()) > 0, "highlighted tokens");
    assert.match(await code.innerText(), /new WebSocket/);
  });

  it("copies a code block's text with its copy button", async () => {
    await opened.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: worker.url });
    const pre = lastAnswer(opened.page).locator("pre.code-block").last();
    const button = pre.getByRole("button", { name: "Copy the code" });
    await button.click();
    // The button says so once the clipboard has the text.
    await opened.page.waitForFunction((b) => b?.textContent === "Copied", await button.elementHandle());
    const copied = await opened.page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, await pre.locator("code").innerText());
  });

  it("draws the mermaid block as an SVG diagram, loading mermaid only for it", async () => {
    const diagram = lastAnswer(opened.page).locator("figure.diagram svg");
    await diagram.waitFor();
    const labels = await diagram.locator("text").allTextContents();
    assert.ok(labels.join(" ").includes("Session object"), `the diagram's labels: ${labels.join(", ")}`);
    assert.equal(await lastAnswer(opened.page).locator("code.language-mermaid").count(), 0);
    await opened.page.screenshot({ path: `${SHOTS}/chat-markdown.png` });
    if (process.env.APTIX_DOCS_SCREENSHOT === "1") await copyFile(`${SHOTS}/chat-markdown.png`, "docs/console.png");
  });

  it("loads no diagram library for an answer without a diagram", async () => {
    await inFreshPage(async ({ page }) => {
      const scripts: string[] = [];
      page.on("request", (request) => scripts.push(request.url()));
      await say(page, "say hello to Dana");
      assert.equal(scripts.filter((url) => url.includes("/vendor/mermaid/")).length, 0);
    });
  });

  it("logged no console errors", () => {
    assert.deepEqual(opened.problems, []);
  });
});

describe("markup from a tool or the model", () => {
  it("shows HTML a client's tool result smuggles into the answer as text: no element, no script run", async () => {
    await inFreshPage(async ({ page }) => {
      await switchMode(page, "workspace", "Workspace");
      const turns = await completedTurns(page);
      await page.locator("#composer-input").fill("read notes.md");
      await page.keyboard.press("Enter");
      const request = page.locator("#client-tools article.client-tool").first();
      await request.waitFor();
      const hostile = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>";
      await request.locator("textarea").fill(JSON.stringify({ path: "notes.md", content: hostile }));
      await request.getByRole("button", { name: "Send result" }).click();
      await waitForTurnAfter(page, turns);
      const answer = lastAnswer(page);
      assert.match(await answer.innerText(), /<img src=x onerror=/);
      assert.equal(await page.locator("#conversation img, #conversation script").count(), 0);
      assert.notEqual(await page.title(), "pwned");
      await page.screenshot({ path: `${SHOTS}/chat-injection-as-text.png` });
    });
  });

  it("refuses to run an inline script under the console's Content Security Policy", async () => {
    await inFreshPage(async ({ page }) => {
      const response = await page.request.get(worker.url);
      assert.match(response.headers()["content-security-policy"] ?? "", /script-src 'self'(;|$)/);
      const outcome = await page.evaluate(async () => {
        const violation = new Promise<string>((resolve) =>
          document.addEventListener("securitypolicyviolation", (event) => resolve(event.violatedDirective), {
            once: true,
          }),
        );
        const script = document.createElement("script");
        script.textContent = "window.inlineScriptRan = true;";
        document.body.append(script);
        return { ran: "inlineScriptRan" in window, directive: await violation };
      });
      assert.deepEqual(outcome, { ran: false, directive: "script-src-elem" });
    });
  });
});

describe("the conversation list", () => {
  /** The first page of the dev-key's conversations, newest first, as the API lists them. */
  const listed = async () =>
    (
      (await (
        await fetch(`${worker.url}/context/sessions`, { headers: { authorization: "Bearer dev-key" } })
      ).json()) as { sessions: { sessionId: string; title: string | null }[] }
    ).sessions;
  let opened: Opened;
  before(async () => {
    opened = await signedIn();
  });
  after(async () => {
    await opened?.context.close();
  });

  it("opens the newest conversation at sign-in while nothing was said in it: signing in twice adds no empty one", async () => {
    const openedAtSignIn = async () => {
      let id = "";
      await inFreshPage(async ({ page }) => {
        id = await page.locator("#session-id").innerText();
      });
      return id;
    };
    const first = await openedAtSignIn();
    const listedBefore = await listed();
    const second = await openedAtSignIn();
    const listedAfter = await listed();
    assert.equal(second, first);
    assert.deepEqual(
      listedAfter.map((s) => s.sessionId),
      listedBefore.map((s) => s.sessionId),
      "no conversation was added",
    );
    assert.equal(listedAfter[0]?.sessionId, first, "the newest, with nothing said in it yet");
  });

  it("lists each conversation by its first message, newest first, and switches between them", async () => {
    const { page } = opened;
    await say(page, "say hello to Ada");
    const first = await page.locator("#session-id").innerText();
    await page.locator("#new-session").click();
    await page.waitForFunction((old) => document.querySelector("#session-id")?.textContent !== old, first);
    await say(page, "say hello to Grace");
    const entries = page.locator("#session-list .session-title");
    await page.waitForFunction(
      () => document.querySelector("#session-list .session-title")?.textContent === "say hello to Grace",
    );
    assert.deepEqual((await entries.allInnerTexts()).slice(0, 2), ["say hello to Grace", "say hello to Ada"]);

    await page.locator(`#session-list [data-session-id="${first}"] button.session-entry`).click();
    await page.waitForFunction((id) => document.querySelector("#session-id")?.textContent === id, first);
    // Who and what was said (the message's tools, Copy and Edit, follow them).
    assert.deepEqual(
      await page
        .locator("#conversation > li.message.user")
        .first()
        .locator(":scope > .who, :scope > .content")
        .allInnerTexts(),
      ["You", "say hello to Ada"],
    );
    assert.equal(
      await page
        .locator(`#session-list [data-session-id="${first}"] button.session-entry`)
        .getAttribute("aria-current"),
      "page",
    );
  });

  for (const width of [1280, 390]) {
    it(`keeps at most one empty conversation: New conversation opens the empty one, ${width} px wide`, async () => {
      await inFreshPage(
        async ({ page }) => {
          const current = () => page.locator("#session-id").innerText();
          // On a phone the list (and its New conversation button) starts folded.
          if (width < 760) await page.locator("#sessions-title").click();
          await say(page, "say hello to Ada");
          const talked = await current();
          await page.locator("#new-session").click();
          await page.waitForFunction((old) => document.querySelector("#session-id")?.textContent !== old, talked);
          const empty = await current();
          const listedBefore = (await listed()).map((s) => s.sessionId);
          await page.locator("#new-session").click();
          await page.locator("#status-line", { hasText: "nothing was said in it yet" }).waitFor();
          assert.equal(await current(), empty, "the empty conversation again");
          assert.deepEqual(
            (await listed()).map((s) => s.sessionId),
            listedBefore,
            "no conversation was added",
          );
        },
        { width },
      );
    });
  }

  it("marks a conversation that waits for the user's approval", async () => {
    const { page } = opened;
    await switchMode(page, "workspace", "Workspace");
    const waiting = await page.locator("#session-id").innerText();
    await page.locator("#composer-input").fill("write plan.txt with ship it");
    await page.keyboard.press("Enter");
    await page.locator("#approval-dialog").waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    const badge = page.locator(`#session-list [data-session-id="${waiting}"] .badge`);
    await badge.waitFor();
    assert.equal(await badge.innerText(), "Waiting for you");
    await page.screenshot({ path: `${SHOTS}/chat-sessions.png` });
  });
});

describe("a message sent before the session's socket has opened", () => {
  it("goes over HTTP and counts its turn as ended once, also when the socket opens afterwards", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      // The socket's ticket is held back, so the page has no socket when the message is sent.
      let releaseTickets = () => {};
      const ticketsHeld = new Promise<void>((resolve) => {
        releaseTickets = resolve;
      });
      await context.route("**/ws-ticket", async (route) => {
        await ticketsHeld;
        await route.continue();
      });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(worker.url);
      await page.locator("#api-key").fill("dev-key");
      await page.keyboard.press("Enter");
      await page.locator("#app").waitFor({ state: "visible" });
      assert.notEqual(await page.locator("#app").getAttribute("data-socket"), "open");

      await say(page, "say hello to Ada");
      assert.equal(await completedTurns(page), 1);
      assert.match(await lastAnswer(page).innerText(), /Ada/);

      releaseTickets();
      await page.waitForFunction(() => document.querySelector("#app")?.getAttribute("data-socket") === "open");
      await say(page, "say hello to Grace");
      assert.equal(await completedTurns(page), 2);
      assert.equal(await page.locator("#conversation > li.message.user").count(), 2);
    } finally {
      await context.close();
    }
  });
});

describe("a reload while the answer streams", () => {
  it("shows the whole answer streamed so far, then the rest, then the whole answer", async () => {
    await inFreshPage(async ({ page, problems }) => {
      await switchMode(page, "scripted", "Scripted");
      const answer = "A long answer arrives word by word, and a reload in the middle must keep every word of it.";
      const script = upstream.createScript([{ type: "completion", content: answer, chunkSize: 3, chunkDelayMs: 120 }]);
      await page.locator("#composer-input").fill(`Tell me something long. ${script.marker}`);
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => (document.querySelector("#streaming")?.textContent ?? "").length >= 18);

      await page.reload();
      await page.locator("#app").waitFor({ state: "visible" });
      await page.waitForFunction(() => !document.querySelector("#streaming")?.hasAttribute("hidden"));
      const restored = (await page.locator("#streaming").innerText()).trim();
      assert.ok(restored.length >= 18, `restored: ${restored}`);
      assert.ok(answer.startsWith(restored), `restored "${restored}" is the start of the answer`);
      await page.screenshot({ path: `${SHOTS}/chat-reloaded-mid-stream.png` });

      await page.waitForFunction(
        (text) =>
          document.querySelector("#conversation > li.message.assistant:last-child")?.textContent?.includes(text),
        answer,
      );
      assert.equal((await lastAnswer(page).locator(".content").innerText()).trim(), answer);
      assert.deepEqual(problems, []);
    });
  });
});

describe("a turn whose model calls a tool, then answers", () => {
  it("puts the first call's words in the conversation once, and streams only the next call's", async () => {
    await inFreshPage(async ({ page, problems }) => {
      await switchMode(page, "scripted_tools", "Scripted tools");
      const before = "Let me greet Dana first.";
      const answer = "Dana has been greeted, and this answer comes slowly, word by word.";
      const script = upstream.createScript([
        {
          type: "completion",
          content: before,
          toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }],
        },
        { type: "completion", content: answer, chunkSize: 3, chunkDelayMs: 80 },
      ]);
      const turns = await completedTurns(page);
      await page.locator("#composer-input").fill(`Greet Dana. ${script.marker}`);
      await page.keyboard.press("Enter");
      await page.waitForFunction(() =>
        (document.querySelector("#streaming")?.textContent ?? "").startsWith("Dana has"),
      );
      const streaming = await page.locator("#streaming").innerText();
      const earlier = page.locator("#conversation > li.message.assistant", { hasText: before });
      assert.equal(streaming.includes(before), false, `the stream: ${streaming}`);
      assert.equal(await earlier.count(), 1);

      await waitForTurnAfter(page, turns);
      assert.equal(await earlier.count(), 1);
      assert.equal((await lastAnswer(page).locator(".content").innerText()).trim(), answer);
      assert.deepEqual(problems, []);
    });
  });
});

describe("a diagram mermaid cannot read", () => {
  it("stays a code block with the reason beside it, leaving nothing else in the page", async () => {
    await inFreshPage(async ({ page }) => {
      await switchMode(page, "scripted", "Scripted");
      const script = upstream.createScript([
        { type: "completion", content: "Here it is:\n\n```mermaid\nflowchart LR\n  A -->\n```\n" },
      ]);
      await say(page, `Draw it. ${script.marker}`);
      const figure = lastAnswer(page).locator("figure.diagram");
      await figure.locator("figcaption.error").waitFor();
      assert.match(await figure.locator("figcaption").innerText(), /could not be drawn/);
      assert.equal(await figure.locator("pre code").count(), 1);
      assert.equal(await page.locator("body > div[id^='ddiagram'], body > svg[id^='diagram']").count(), 0);
    });
  });
});

describe("artifacts", () => {
  it("opens an artifact drawn as Markdown and downloads it as a file", async () => {
    await inFreshPage(async ({ page }) => {
      const sessionId = await page.locator("#session-id").innerText();
      const run = await fetch(`${worker.url}/context/sessions/${sessionId}/workflows/draft_ddr`, {
        method: "POST",
        headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
        body: JSON.stringify({ parameters: { id: "EDG-042", title: "Edge caching" } }),
      });
      assert.equal(run.status, 200, await run.text());
      await page.reload();
      const item = page.locator('#artifacts li:has-text("EDG-042")');
      await item.waitFor();

      await item.getByRole("button", { name: "Open" }).click();
      const dialog = page.locator("#artifact-dialog");
      await dialog.waitFor({ state: "visible" });
      assert.match(await dialog.locator("h2#artifact-title").innerText(), /EDG-042/);
      assert.ok((await dialog.locator("#artifact-body h1, #artifact-body h2").count()) > 0, "headings drawn");

      const [download] = await Promise.all([
        page.waitForEvent("download"),
        dialog.getByRole("button", { name: "Download" }).click(),
      ]);
      assert.match(download.suggestedFilename(), /^edg-042.*\.md$/);
      const saved = await readFile(await download.path(), "utf8");
      const view = (await (
        await fetch(`${worker.url}/context/sessions/${sessionId}`, { headers: { authorization: "Bearer dev-key" } })
      ).json()) as { artifacts: { title: string; content: string }[] };
      assert.equal(saved, view.artifacts.find((a) => a.title.includes("EDG-042"))?.content);
    });
  });
});

describe("dark mode", () => {
  it("follows the system's dark scheme", async () => {
    await inFreshPage(
      async ({ page }) => {
        await say(page, "show me how aptix works");
        await lastAnswer(page).locator("figure.diagram svg").waitFor();
        const [r, g, b] = await page.evaluate(() =>
          (getComputedStyle(document.documentElement).backgroundColor.match(/\d+/g) ?? []).map(Number),
        );
        const luminance = (0.2126 * (r ?? 255) + 0.7152 * (g ?? 255) + 0.0722 * (b ?? 255)) / 255;
        assert.ok(luminance < 0.2, `the page's background is dark (luminance ${luminance.toFixed(2)})`);
        await page.screenshot({ path: `${SHOTS}/chat-dark.png` });
      },
      { colorScheme: "dark" },
    );
  });
});
describe("following the conversation", () => {
  /**
   * How far the conversation's end (its status line) is below the message box's top, in px (≤ 0: in view). On a wide
   * screen the conversation pane scrolls and the message box stays at the window's bottom; on a phone the page scrolls.
   */
  const gapBelow = (page: Page) =>
    page.evaluate(
      () =>
        (document.querySelector("#status-line")?.getBoundingClientRect().bottom ?? 0) -
        (document.querySelector("#composer")?.getBoundingClientRect().top ?? 0),
    );
  /** How far the conversation is scrolled down, whichever scrolls it (the pane, or the page on a phone). */
  const scrolled = (page: Page) =>
    page.evaluate(() => Math.max(window.scrollY, document.querySelector("#chat-scroll")?.scrollTop ?? 0));
  const longAnswer = Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n\n");

  for (const width of [1280, 390]) {
    it(`keeps the newest answer in view after several long answers, ${width} px wide`, async () => {
      await inFreshPage(
        async ({ page }) => {
          await switchMode(page, "scripted", "Scripted");
          const script = upstream.createScript([{ type: "completion", content: longAnswer }], { repeat: true });
          for (let i = 1; i <= 3; i++) await say(page, `Say it at length (${i}). ${script.marker}`);
          // The view follows on the next frame after the answer is drawn.
          await page.waitForFunction(
            () => (document.querySelector("#composer")?.getBoundingClientRect().bottom ?? 0) <= window.innerHeight + 48,
          );
          const box = await lastAnswer(page).boundingBox();
          const viewport = await page.evaluate(() => window.innerHeight);
          assert.ok(
            box && box.y + box.height > 0 && box.y + box.height <= viewport,
            `the newest answer's end is in view (${JSON.stringify(box)}, window ${viewport}, gap ${await gapBelow(page)})`,
          );
          await page.screenshot({ path: `${SHOTS}/chat-follows-${width}.png` });
        },
        { width },
      );
    });
  }

  it("keeps the header and both sidebars in place while the conversation pane scrolls, 1280 px wide", async () => {
    await inFreshPage(async ({ page }) => {
      await switchMode(page, "scripted", "Scripted");
      const script = upstream.createScript([{ type: "completion", content: longAnswer }], { repeat: true });
      for (let i = 1; i <= 2; i++) await say(page, `Say it at length (${i}). ${script.marker}`);
      const places = () =>
        page.evaluate(() => ({
          pageScrolls: document.documentElement.scrollHeight > window.innerHeight,
          header: document.querySelector("header.top")?.getBoundingClientRect().top,
          sessions: document.querySelector("nav.sessions")?.getBoundingClientRect().top,
          side: document.querySelector("#side-panel")?.getBoundingClientRect().top,
          composer: document.querySelector("#composer")?.getBoundingClientRect().top,
          pane: document.querySelector("#chat-scroll")?.scrollTop ?? 0,
        }));
      const atEnd = await places();
      assert.equal(atEnd.pageScrolls, false, "the page itself does not scroll");
      assert.ok(atEnd.pane > 0, "the conversation pane is scrolled to its end");
      await page.locator("#chat-scroll").hover({ position: { x: 40, y: 40 } });
      await page.mouse.wheel(0, -20_000);
      await page.waitForFunction(() => (document.querySelector("#chat-scroll")?.scrollTop ?? 1) === 0);
      const { pane, ...fixed } = await places();
      const { pane: _end, ...fixedAtEnd } = atEnd;
      assert.deepEqual(fixed, fixedAtEnd, "the header, the sidebars and the message box stayed");
    });
  });

  it("opens a long conversation at its end", async () => {
    await inFreshPage(async ({ page }) => {
      await switchMode(page, "scripted", "Scripted");
      const script = upstream.createScript([{ type: "completion", content: longAnswer }], { repeat: true });
      for (let i = 1; i <= 2; i++) await say(page, `Say it at length (${i}). ${script.marker}`);
      const long = await page.locator("#session-id").innerText();
      await page.locator("#new-session").click();
      await page.waitForFunction((old) => document.querySelector("#session-id")?.textContent !== old, long);
      await page.evaluate(() => {
        window.scrollTo(0, 0);
        document.querySelector("#chat-scroll")?.scrollTo(0, 0);
      });
      await page.locator(`#session-list [data-session-id="${long}"] button.session-entry`).click();
      await page.waitForFunction((id) => document.querySelector("#session-id")?.textContent === id, long);
      await page.waitForFunction(() => document.querySelectorAll("#conversation > li.message.assistant").length >= 2);
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      assert.ok((await gapBelow(page)) <= 48, `the conversation's end is in view (gap ${await gapBelow(page)})`);
      assert.ok((await scrolled(page)) > 0, "the conversation scrolled down to it");
    });
  });

  it("stays where the reader scrolled up to while an answer streams, and offers to jump to the latest", async () => {
    await inFreshPage(async ({ page }) => {
      await switchMode(page, "scripted", "Scripted");
      // One script for the conversation: the upstream finds it by the marker its history carries.
      const script = upstream.createScript([
        { type: "completion", content: longAnswer },
        { type: "completion", content: longAnswer, chunkSize: 6, chunkDelayMs: 40 },
      ]);
      await say(page, `Say it at length. ${script.marker}`);
      const turns = await completedTurns(page);
      await page.locator("#composer-input").fill(`Again, slowly. ${script.marker}`);
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => (document.querySelector("#streaming")?.textContent ?? "").length > 40);
      // The wheel over the conversation scrolls what holds it (the pane on a wide screen).
      await page.locator("#chat-scroll").hover({ position: { x: 40, y: 40 } });
      await page.mouse.wheel(0, -20_000);
      await page.waitForFunction(
        () => window.scrollY === 0 && (document.querySelector("#chat-scroll")?.scrollTop ?? 0) === 0,
      );
      const streamed = await page.locator("#streaming").innerText();
      await page.waitForFunction(
        (before) => (document.querySelector("#streaming")?.textContent ?? "").length > before + 120,
        streamed.length,
      );
      assert.equal(await scrolled(page), 0, "the view stayed where the reader put it");
      const jump = page.locator("#jump-latest");
      await jump.waitFor({ state: "visible" });
      await jump.click();
      assert.ok((await gapBelow(page)) <= 48, "back at the end");
      await waitForTurnAfter(page, turns);
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      assert.ok((await gapBelow(page)) <= 48, "and followed to the answer's end");
      assert.equal(await jump.isVisible(), false);
    });
  });
});

describe("stopping a turn", () => {
  it("stops a slow turn with Esc, and the session takes the next message", async () => {
    await inFreshPage(async ({ page }) => {
      await switchMode(page, "scripted", "Scripted");
      // One script for the conversation: the upstream finds it by the marker its history carries.
      const slow = upstream.createScript([
        { type: "completion", content: "This answer takes its time, word by word.", chunkSize: 2, chunkDelayMs: 300 },
        { type: "completion", content: "Ready again." },
      ]);
      const turns = await completedTurns(page);
      await page.locator("#composer-input").fill(`Take your time. ${slow.marker}`);
      await page.keyboard.press("Enter");
      await page.locator("#turn-bar").waitFor({ state: "visible" });
      await page.waitForFunction(() => (document.querySelector("#streaming")?.textContent ?? "").length > 0);
      await page.keyboard.press("Escape");
      await waitForTurnAfter(page, turns);
      assert.equal(await page.locator("#turn-bar").isVisible(), false);
      await say(page, `Are you there? ${slow.marker}`);
      assert.equal((await lastAnswer(page).locator(".content").innerText()).trim(), "Ready again.");
    });
  });
});

describe("stopping a turn mid-answer", () => {
  for (const width of [1280, 390]) {
    it(`keeps what was streamed, marked as stopped, in the page and after a reload, ${width} px wide`, async () => {
      await inFreshPage(
        async ({ page }) => {
          await switchMode(page, "scripted", "Scripted");
          const slow = upstream.createScript([
            {
              type: "completion",
              content: "Half of this answer arrives before the stop.",
              chunkSize: 4,
              chunkDelayMs: 250,
            },
          ]);
          const turns = await completedTurns(page);
          await page.locator("#composer-input").fill(`Take your time. ${slow.marker}`);
          await page.keyboard.press("Enter");
          await page.waitForFunction(() => (document.querySelector("#streaming")?.textContent ?? "").length >= 8);
          await page.locator("#stop-turn").click();
          await waitForTurnAfter(page, turns);
          const stopped = page.locator("#conversation > li.message.assistant.stopped");
          const kept = (await stopped.locator(".content").innerText()).trim();
          assert.ok(kept.length >= 4, `the streamed text is kept: ${JSON.stringify(kept)}`);
          assert.ok(
            "Half of this answer arrives before the stop.".startsWith(kept),
            `a prefix: ${JSON.stringify(kept)}`,
          );
          assert.match(await stopped.locator(".stopped-mark").innerText(), /Stopped/);
          await page.screenshot({ path: `${SHOTS}/chat-stopped-${width}.png` });
          // The stored conversation has it too.
          await page.reload();
          await page.locator("#app[data-socket=open]").waitFor();
          await page.waitForLoadState("networkidle");
          assert.equal(
            (await page.locator("#conversation > li.message.assistant.stopped .content").innerText()).trim(),
            kept,
          );
        },
        { width },
      );
    });
  }
});

describe("the keyboard", () => {
  it("breaks a line with Shift+Enter and sends both lines with Enter", async () => {
    await inFreshPage(async ({ page }) => {
      const turns = await completedTurns(page);
      const input = page.locator("#composer-input");
      await input.click();
      await page.keyboard.type("say hello to Ada");
      await page.keyboard.press("Shift+Enter");
      await page.keyboard.type("and to Grace");
      assert.equal(
        await input.inputValue(),
        "say hello to Ada\nand to Grace",
        "Shift+Enter broke the line, sent nothing",
      );
      await page.keyboard.press("Enter");
      await waitForTurnAfter(page, turns);
      assert.equal(
        await page.locator("#conversation > li.message.user .content").last().innerText(),
        "say hello to Ada\nand to Grace",
      );
    });
  });

  for (const width of [1280, 390]) {
    it(`searches the conversations with Ctrl+K, ${width} px wide`, async () => {
      await inFreshPage(
        async ({ page }) => {
          await say(page, "say hello to Ada");
          await page.locator("#composer-input").focus();
          await page.keyboard.press("Control+K");
          assert.equal(await page.evaluate(() => document.activeElement?.id), "session-search");
          assert.equal(await page.locator("#sessions-panel").getAttribute("open"), "", "the list is unfolded");
          await page.keyboard.type("no such title anywhere");
          await page.keyboard.press("Enter");
          await page.locator("#session-list-empty").waitFor({ state: "visible" });
          await page.keyboard.press("Control+A");
          await page.keyboard.type("hello to Ada");
          await page.keyboard.press("Enter");
          await page.waitForFunction(() =>
            [...document.querySelectorAll("#session-list .session-title")].some(
              (t) => t.textContent === "say hello to Ada",
            ),
          );
        },
        { width },
      );
    });
  }
});

// A conversation's branches in a real browser (Debian's Chromium) against `wrangler dev`: Regenerate asks again for
// the last answer and Edit sends an earlier message edited, each in a new branch (the conversation left keeps its
// answers), and the switcher ("‹ 2 / 2 ›") moves between them; Copy on every message; the switcher on a phone.
// Screenshots go to test-results/e2e/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { type ScriptedUpstream, startScriptedUpstream } from "../upstream/scripted-upstream.ts";
import {
  collectProblems,
  completedTurns,
  launchChromium,
  scriptedMode,
  signInWithDevKey,
  waitForTurnAfter,
} from "./support.ts";

const SHOTS = "test-results/e2e";

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

interface Opened {
  context: BrowserContext;
  page: Page;
  problems: string[];
}

/** A fresh page signed in with the dev-key, in a new conversation on the scripted model; closed afterwards. */
async function inFreshPage(test: (opened: Opened) => Promise<void>, size = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport: size, colorScheme: "light" });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    collectProblems(page, problems);
    // A new context signs in to a new conversation (or the newest, when nothing was said in it yet).
    await signInWithDevKey(page, worker.url);
    await switchMode(page);
    await test({ context, page, problems });
  } finally {
    await context.close();
  }
}

async function switchMode(page: Page): Promise<void> {
  await page.locator("#mode-picker").selectOption("scripted");
  await page.locator("#mode-form button[type=submit]").click();
  await page.waitForFunction(() => document.querySelector("#current-mode")?.textContent === "Scripted");
  await page.waitForFunction(() => document.querySelectorAll("#conversation > li.message.workflow").length > 0);
}

/** Sends a message and waits until its turn has completed and the page has redrawn the session. */
async function say(page: Page, text: string): Promise<void> {
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill(text);
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
}

const sessionId = async (page: Page) => (await page.locator("#session-id").innerText()).trim();
/** What the page shows each of `who`'s messages say (a Markdown answer's blocks may end in a line break). */
const contents = async (page: Page, who: "user" | "assistant") =>
  (await page.locator(`#conversation > li.message.${who} > .content`).allInnerTexts()).map((text) => text.trim());

/** Waits until the page shows the session `id` with the switcher at `shown` ("2 / 2"). */
async function showing(page: Page, id: string, shown: string): Promise<void> {
  await page.waitForFunction(
    ([want, at]) =>
      document.querySelector("#session-id")?.textContent === want &&
      document.querySelector("#conversation .branch-position")?.textContent === at,
    [id, shown],
  );
}

interface SessionView {
  sessionId: string;
  mode: string;
  branchOf: { sessionId: string; beforeMessage: number; seededThrough: number } | null;
  conversation: { seq: number; role: string; kind: string; content: string | null }[];
}

async function api<T>(path: string, body?: unknown, method = body === undefined ? "GET" : "POST"): Promise<T> {
  const response = await fetch(`${worker.url}${path}`, {
    method,
    headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  assert.ok(response.status === 200 || response.status === 201, `${path}: ${response.status}`);
  return (await response.json()) as T;
}

const userSaid = (view: SessionView) =>
  view.conversation.filter((m) => m.role === "user" && m.kind === "message").map((m) => m.content);

describe("regenerate", () => {
  it("asks again for the last answer in a new branch; the switcher shows 2 / 2 and goes back to the first answer", async () => {
    await inFreshPage(async ({ page, problems }) => {
      const script = upstream.createScript([
        { type: "completion", content: "The first fact." },
        { type: "completion", content: "Another fact." },
      ]);
      await say(page, `Tell me a fact. ${script.marker}`);
      const original = await sessionId(page);
      const turns = await completedTurns(page);
      await page.getByRole("button", { name: "Regenerate this answer (a new branch)" }).click();
      await waitForTurnAfter(page, turns);
      const branch = await sessionId(page);
      assert.notEqual(branch, original, "the new answer is in a new session");
      await showing(page, branch, "2 / 2");
      assert.deepEqual(await contents(page, "assistant"), ["Another fact."]);
      assert.deepEqual(await contents(page, "user"), [`Tell me a fact. ${script.marker}`]);

      const view = await api<SessionView>(`/context/sessions/${branch}`);
      assert.equal(view.branchOf?.sessionId, original);
      assert.equal(view.mode, "scripted");
      assert.deepEqual(userSaid(view), [`Tell me a fact. ${script.marker}`]);

      // By keyboard; the switcher of the session opened has the focus then (its only way on: Next).
      await page.getByRole("button", { name: "Previous branch" }).focus();
      await page.keyboard.press("Enter");
      await showing(page, original, "1 / 2");
      assert.deepEqual(await contents(page, "assistant"), ["The first fact."]);
      await page.waitForFunction(() => document.activeElement?.getAttribute("aria-label") === "Next branch");
      assert.deepEqual(problems, []);
    });
  });
});

describe("regenerate again", () => {
  it("puts a third answer beside the first two, in the same switcher (3 / 3), all from the original", async () => {
    await inFreshPage(async ({ page, problems }) => {
      const script = upstream.createScript([
        { type: "completion", content: "Take one." },
        { type: "completion", content: "Take two." },
        { type: "completion", content: "Take three." },
      ]);
      await say(page, `Give me a take. ${script.marker}`);
      const original = await sessionId(page);
      const regenerate = page.getByRole("button", { name: "Regenerate this answer (a new branch)" });
      for (const shown of ["2 / 2", "3 / 3"]) {
        const turns = await completedTurns(page);
        await regenerate.click();
        await waitForTurnAfter(page, turns);
        await showing(page, await sessionId(page), shown);
      }
      assert.deepEqual(await contents(page, "assistant"), ["Take three."]);
      const listed = await api<{ sessions: { branchOf: { sessionId: string } | null }[] }>(
        `/context/sessions?branchOf=${original}`,
      );
      assert.deepEqual(
        listed.sessions.map((s) => s.branchOf?.sessionId),
        [original, original],
      );
      await page.getByRole("button", { name: "Previous branch" }).click();
      await page.waitForFunction(
        () => document.querySelector("#conversation .branch-position")?.textContent === "2 / 3",
      );
      assert.deepEqual(await contents(page, "assistant"), ["Take two."]);
      assert.deepEqual(problems, []);
    });
  });
});

describe("edit", () => {
  it("sends an earlier message edited in a new branch: the edited text, a new answer, and a switcher with both", async () => {
    await inFreshPage(async ({ page, problems }) => {
      const script = upstream.createScript([
        { type: "completion", content: "Answer one." },
        { type: "completion", content: "Answer two." },
        { type: "completion", content: "Answer three." },
        { type: "completion", content: "The edited answer." },
      ]);
      await say(page, `Question one. ${script.marker}`);
      await say(page, "Question two.");
      await say(page, "Question three.");
      const original = await sessionId(page);
      const second = page.locator("#conversation > li.message.user").nth(1);
      const beforeMessage = Number(await second.getAttribute("data-seq"));

      // By keyboard: the Edit button, then the editor in the message's place.
      const turns = await completedTurns(page);
      await second.getByRole("button", { name: "Edit this message (a new branch from here)" }).focus();
      await page.keyboard.press("Enter");
      const editor = page.getByRole("textbox", { name: "Your message, edited" });
      assert.equal(await editor.inputValue(), "Question two.");
      await editor.fill("Question two, said better.");
      await page.keyboard.press("Enter");
      await waitForTurnAfter(page, turns);

      const branch = await sessionId(page);
      assert.notEqual(branch, original);
      await showing(page, branch, "2 / 2");
      assert.deepEqual(await contents(page, "user"), [`Question one. ${script.marker}`, "Question two, said better."]);
      assert.deepEqual(await contents(page, "assistant"), ["Answer one.", "The edited answer."]);
      await page.screenshot({ path: `${SHOTS}/branches-edited.png` });

      const listed = await api<{ sessions: { sessionId: string; branchOf: unknown }[] }>(
        `/context/sessions?branchOf=${original}`,
      );
      assert.deepEqual(listed.sessions, [
        { ...listed.sessions[0], sessionId: branch, branchOf: { sessionId: original, beforeMessage } },
      ]);
      const source = await api<SessionView>(`/context/sessions/${original}`);
      assert.deepEqual(userSaid(source), [`Question one. ${script.marker}`, "Question two.", "Question three."]);

      await page.getByRole("button", { name: "Previous branch" }).click();
      await showing(page, original, "1 / 2");
      assert.deepEqual(await contents(page, "assistant"), ["Answer one.", "Answer two.", "Answer three."]);
      // The switcher sits at the message where the branches part.
      assert.equal(
        await page.locator(`#conversation > li.message.user[data-seq="${beforeMessage}"] .branch-position`).innerText(),
        "1 / 2",
      );
      assert.deepEqual(problems, []);
    });
  });
});

describe("the conversation list", () => {
  for (const size of [
    { width: 1280, height: 900 },
    { width: 390, height: 844 },
  ]) {
    it(`groups a branch under the conversation it came from, marked, not listed as a stranger with its title, ${size.width} px wide`, async () => {
      const script = upstream.createScript([
        { type: "completion", content: "Listed." },
        { type: "completion", content: "Listed again." },
      ]);
      const { sessionId: source } = await api<{ sessionId: string }>("/context/sessions", { mode: "scripted" });
      for (const content of [`Mark my branch. ${script.marker}`, "And again."])
        await api(`/context/sessions/${source}/messages`, { content });
      const { sessionId: branch } = await api<{ sessionId: string }>(`/context/sessions/${source}/branches`, {
        beforeMessage: 3,
      });
      await inFreshPage(async ({ page }) => {
        // On a phone the list starts folded.
        if (size.width < 760) await page.locator("#sessions-title").click();
        const grouped = page.locator(
          `#session-list > li[data-session-id="${source}"] > ol.session-branches > li[data-session-id="${branch}"]`,
        );
        await grouped.waitFor();
        assert.equal(
          await page.locator(`#session-list > li[data-session-id="${branch}"]`).count(),
          0,
          "not listed on its own",
        );
        const own = (id: string) => page.locator(`#session-list li[data-session-id="${id}"] > button.session-entry`);
        await own(branch).locator(".badge", { hasText: "Branch" }).waitFor();
        assert.equal(await own(source).locator(".badge").count(), 0);
        assert.deepEqual(
          [
            await own(branch).locator(".session-title").innerText(),
            await own(source).locator(".session-title").innerText(),
          ],
          [`Mark my branch. ${script.marker}`, `Mark my branch. ${script.marker}`],
        );
        assert.equal(
          await page
            .locator(`#session-list > li[data-session-id="${source}"] > ol.session-branches`)
            .getAttribute("aria-label"),
          `Branches of “Mark my branch. ${script.marker}”`,
        );
        await page.screenshot({ path: `${SHOTS}/branches-grouped-${size.width}.png` });
      }, size);
    });
  }
});

describe("a branch whose original was deleted", () => {
  it("switches between the branches that remain, leaving the original out", async () => {
    const script = upstream.createScript(
      ["One.", "Two.", "Two, take one.", "Two, take two."].map((content) => ({ type: "completion" as const, content })),
    );
    const { sessionId: source } = await api<{ sessionId: string }>("/context/sessions", { mode: "scripted" });
    for (const content of [`Question one. ${script.marker}`, "Question two."])
      await api(`/context/sessions/${source}/messages`, { content });
    const branches: string[] = [];
    for (const take of ["Question two, take one.", "Question two, take two."]) {
      const { sessionId } = await api<{ sessionId: string }>(`/context/sessions/${source}/branches`, {
        beforeMessage: 3,
      });
      await api(`/context/sessions/${sessionId}/messages`, { content: take });
      branches.push(sessionId);
    }
    await api(`/context/sessions/${source}`, undefined, "DELETE");
    const [first = "", second = ""] = branches;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await signInWithDevKey(page, `${worker.url}/?session=${first}`);
      await showing(page, first, "1 / 2");
      assert.deepEqual(await contents(page, "assistant"), ["One.", "Two, take one."]);
      await page.getByRole("button", { name: "Next branch" }).click();
      await showing(page, second, "2 / 2");
      assert.deepEqual(await contents(page, "assistant"), ["One.", "Two, take two."]);
    } finally {
      await context.close();
    }
  });
});

describe("copy", () => {
  it("copies any message's text, and its button says Copied", async () => {
    await inFreshPage(async ({ context, page, problems }) => {
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: worker.url });
      const script = upstream.createScript([{ type: "completion", content: "Copy me, please." }]);
      await say(page, `Something to copy. ${script.marker}`);
      const messages = page.locator("#conversation > li.message.user, #conversation > li.message.assistant");
      assert.equal(await messages.count(), 2);
      for (const [index, text] of [`Something to copy. ${script.marker}`, "Copy me, please."].entries()) {
        const button = messages.nth(index).getByRole("button", { name: "Copy this message" });
        await button.click();
        await messages.nth(index).getByRole("button", { name: "Copied" }).waitFor();
        assert.equal(await page.evaluate(() => navigator.clipboard.readText()), text);
      }
      assert.deepEqual(problems, []);
    });
  });
});

describe("on a phone", () => {
  it("shows the switcher whole, with targets big enough to tap, and taps back to the first answer", async () => {
    await inFreshPage(
      async ({ page, problems }) => {
        const script = upstream.createScript([
          { type: "completion", content: "A small answer." },
          { type: "completion", content: "A second small answer." },
        ]);
        await say(page, `Phone question. ${script.marker}`);
        const original = await sessionId(page);
        const turns = await completedTurns(page);
        await page.getByRole("button", { name: "Regenerate this answer (a new branch)" }).click();
        await waitForTurnAfter(page, turns);
        await showing(page, await sessionId(page), "2 / 2");
        const previous = page.getByRole("button", { name: "Previous branch" });
        await previous.scrollIntoViewIfNeeded();
        const switcher = await page.getByRole("group", { name: "Branch 2 of 2" }).boundingBox();
        assert.ok(switcher, "the switcher is drawn");
        assert.ok(
          switcher.x >= 0 && switcher.x + switcher.width <= 390,
          `inside the screen: ${JSON.stringify(switcher)}`,
        );
        const target = await previous.boundingBox();
        assert.ok(target && target.height >= 40 && target.width >= 40, `big enough: ${JSON.stringify(target)}`);
        await page.screenshot({ path: `${SHOTS}/branches-phone.png` });
        await previous.click();
        await showing(page, original, "1 / 2");
        assert.deepEqual(await contents(page, "assistant"), ["A small answer."]);
        assert.deepEqual(problems, []);
      },
      { width: 390, height: 844 },
    );
  });
});

// The chat console in a real browser (Debian's Chromium driven by playwright-core) against the Worker under
// `wrangler dev` with the offline demo model: the flows a person goes through, on a wide and a narrow screen.
// Run with `npm run test:e2e` (needs `apt-get install -y chromium`). Screenshots go to test-results/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { startEverythingServer } from "../mcp/reference-server.ts";
import { startScriptedUpstream } from "../upstream/scripted-upstream.ts";
import {
  adminPageReady,
  adminPut,
  completedTurns,
  launchChromium,
  signInWithDevKey,
  waitForTurnAfter,
} from "./support.ts";

const SHOTS = "test-results/e2e";
const VIEWPORTS = [
  { name: "wide", width: 1280, height: 860 },
  { name: "narrow", width: 390, height: 844 },
] as const;

interface Frame {
  type: string;
  seq: number;
  text?: string;
}

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

/** Writes an admin resource (a route, a mode, an MCP server) with the local dev-key; it must be stored. */
const put = (path: string, body: unknown) => adminPut(worker.url, path, body);

/** Clicks one of the header's actions; on a phone they fold behind the Menu button, which opens them first. */
async function headerAction(page: Page, selector: string): Promise<void> {
  const menu = page.locator("#open-menu");
  if ((await menu.isVisible()) && (await menu.getAttribute("aria-expanded")) !== "true") await menu.click();
  await page.locator(selector).waitFor({ state: "visible" });
  await page.locator(selector).click();
}

/** The text of the newest conversation entry of a kind ("assistant", "user", "workflow"). */
async function lastMessage(page: Page, kind: string): Promise<string> {
  return (await page.locator(`#conversation > li.message.${kind}`).last().innerText()).trim();
}

for (const viewport of VIEWPORTS) {
  describe(`the console on a ${viewport.name} screen (${viewport.width}x${viewport.height})`, () => {
    let context: BrowserContext;
    let page: Page;
    const problems: string[] = [];
    const frames: Frame[] = [];
    const shot = (state: string) => page.screenshot({ path: `${SHOTS}/${viewport.name}-${state}.png` });

    before(async () => {
      context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
      page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on("console", (message) => {
        if (message.type() !== "error" && message.type() !== "warning") return;
        // The one refusal the flows provoke on purpose: draft_ddr with a bad id (Chromium logs every 4xx).
        const deliberate =
          message.text().includes("status of 400") && message.location().url.endsWith("/workflows/draft_ddr");
        if (!deliberate) problems.push(`${message.type()}: ${message.text()} (${message.location().url})`);
      });
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.stack ?? error.message}`));
      page.on("websocket", (socket) => {
        socket.on("framereceived", ({ payload }) => frames.push(JSON.parse(String(payload)) as Frame));
      });
      await page.goto(worker.url);
    });

    after(async () => {
      await context?.close();
    });

    it("signs in with the local dev-key and opens a session in the default mode", async () => {
      await page.locator("#api-key").fill("dev-key");
      await page.keyboard.press("Enter");
      await page.locator("#app").waitFor({ state: "visible" });
      assert.equal(await page.locator("#current-mode").innerText(), "General Chat");
      assert.match(await page.locator("#session-id").innerText(), /^[0-9a-f]{64}$/);
      await page.waitForFunction(() => document.querySelector("#app")?.getAttribute("data-socket") === "open");
      await shot("signed-in");
    });

    it("shows each mode's model route in the modes panel", async () => {
      const routes = await page.locator("#modes-panel .mode-route").allInnerTexts();
      assert.ok(routes.length >= 3, `one line per mode, got ${routes.length}`);
      assert.deepEqual([...new Set(routes)], ["Model route: default"]);
    });

    it("streams the answer to a message into the conversation", async () => {
      const before = frames.length;
      const turns = await completedTurns(page);
      await page.locator("#composer-input").fill("what modes are there?");
      await page.keyboard.press("Enter");
      await waitForTurnAfter(page, turns);
      const deltas = frames.slice(before).filter((f) => f.type === "assistant_delta");
      assert.ok(deltas.length > 1, `expected the answer in several assistant_delta frames, got ${deltas.length}`);
      // The deltas make the stored answer, which the page draws as Markdown (the modes as a list).
      const sessionId = await page.locator("#session-id").innerText();
      const view = (await (
        await fetch(`${worker.url}/context/sessions/${sessionId}`, { headers: { authorization: "Bearer dev-key" } })
      ).json()) as { conversation: { role: string; content: string | null }[] };
      const stored = view.conversation.filter((m) => m.role === "assistant").at(-1)?.content ?? "";
      assert.equal(deltas.map((d) => d.text).join(""), stored, "the deltas are the stored answer");
      const modes = page.locator("#conversation > li.message.assistant").last().locator("li");
      assert.match((await modes.allInnerTexts()).join("\n"), /General Chat \(general\)/);
      await shot("streamed-answer");
    });

    it("switches the mode from the picker and records it in the conversation", async () => {
      await page.locator("#mode-picker").selectOption("workspace");
      await page.locator("#mode-form button[type=submit]").click();
      await page.waitForFunction(() => document.querySelector("#current-mode")?.textContent === "Workspace");
      assert.match(await lastMessage(page, "workflow"), /switch_mode.*selected by the user|Switched the session/s);
    });

    it("asks to approve each write with no choice made in advance", async () => {
      await page.locator("#composer-input").fill("write a.txt with hello and write b.txt with bye");
      await page.keyboard.press("Enter");
      await page.locator("#approval-dialog").waitFor({ state: "visible" });
      assert.equal(await page.locator("#approval-calls > li").count(), 2);
      assert.match(await page.locator("#approval-calls > li").first().innerText(), /"path": "a\.txt"/);
      assert.equal(await page.locator("#tool-calls > li").count(), 2, "the working indicator lists both calls");
      assert.equal(await page.locator("#approval-calls input[type=radio]:checked").count(), 0);
      await shot("approval-dialog");
    });

    it("shows a write's prepared request inside its approval", async () => {
      assert.match(
        await page.locator("#approval-calls > li").first().locator("pre.prepared").innerText(),
        /"action": "write_file"/,
      );
    });

    it("sends nothing while a call has no choice", async () => {
      await page.locator("#submit-decisions").click();
      // Long enough for decisions to have been sent and drawn, had they been.
      await page.waitForTimeout(300);
      assert.equal(await page.locator("#approval-dialog").isVisible(), true);
      assert.equal(await page.locator("#tool-calls > li").count(), 2, "both calls still wait");
    });

    it("approves one write and denies the other in the approval dialog", async () => {
      const dialog = page.locator("#approval-dialog");
      await page.locator("#approval-calls > li").first().getByLabel("Approve").check();
      const second = page.locator("#approval-calls > li").nth(1);
      await second.getByLabel("Deny").check();
      await second.getByLabel("Reason (optional)").fill("not b.txt");
      await page.locator("#submit-decisions").click();
      await dialog.waitFor({ state: "hidden" });
      await page.locator('#client-tools [data-tool-call-id] h3:has-text("workspace_write_file")').waitFor();
      assert.equal(await page.locator("#client-tools article.client-tool").count(), 1, "only the approved write");
      assert.match(await page.locator("#client-tools article.client-tool pre").innerText(), /"path": "a\.txt"/);
    });

    it("says the browser cannot act on files and asks for the client's result, filling in none", async () => {
      const request = page.locator("#client-tools article.client-tool");
      assert.match(await request.locator(".client-note").innerText(), /This browser cannot act on files/);
      assert.match(await request.locator("pre.prepared").innerText(), /"path": "a\.txt"/);
      assert.equal(await request.getByLabel("Result from your client (JSON)").inputValue(), "", "no made-up result");
      // Sent empty, nothing goes to the server: the person is asked for the result.
      await request.getByRole("button", { name: "Send result" }).click();
      assert.match(await page.locator("#status-line").innerText(), /Paste the result your client gave first/);
      assert.equal(await request.count(), 1, "the request still waits");
      await shot("client-request-asks");
    });

    it("completes the approved write's hand-off by sending the client's result", async () => {
      const turns = await completedTurns(page);
      // The browser fills in nothing: the person pastes what their client did.
      const request = page.locator("#client-tools article.client-tool");
      await request
        .getByLabel("Result from your client (JSON)")
        .fill(JSON.stringify({ path: "a.txt", bytesWritten: 5 }));
      await request.getByRole("button", { name: "Send result" }).click();
      await waitForTurnAfter(page, turns);
      const answer = await lastMessage(page, "assistant");
      assert.match(answer, /Wrote 5 bytes to a\.txt/);
      assert.match(answer, /not b\.txt|denied/i);
      assert.equal(await page.locator("#client-tools").isHidden(), true);
    });

    it("completes a client read with a pasted result", async () => {
      await page.locator("#composer-input").fill("read README.md");
      await page.keyboard.press("Enter");
      const request = page.locator("#client-tools article.client-tool");
      await request.waitFor();
      await request
        .getByLabel("Result from your client (JSON)")
        .fill(JSON.stringify({ path: "README.md", content: "# Pasted\nhi" }));
      await shot("client-request");
      const turns = await completedTurns(page);
      await request.getByRole("button", { name: "Send result" }).click();
      await waitForTurnAfter(page, turns);
      assert.equal(await page.locator("#client-tools").isHidden(), true);
      assert.match(await lastMessage(page, "assistant"), /README\.md has 11 characters/);
    });

    it("runs draft_ddr from its form, showing the server's message beside a bad field first", async () => {
      await headerAction(page, "#open-workflows");
      await page.locator('#workflow-list [data-workflow-id="draft_ddr"]').click();
      const form = page.locator("#workflow-form");
      await form.getByLabel("id (required)").fill("ddr one");
      await form.getByLabel("title (required)").fill("Edge rate limits");
      await form.getByRole("button", { name: "Run Draft DDR" }).click();
      const idError = form.locator('[data-field-error="id"]');
      await page.waitForFunction(() => document.querySelector('[data-field-error="id"]')?.textContent !== "");
      assert.match(await idError.innerText(), /TUL-012/);
      assert.equal(await form.getByLabel("id (required)").getAttribute("aria-invalid"), "true");
      await shot("workflow-form-error");
      await form.getByLabel("id (required)").fill("EDG-001");
      await form.getByRole("button", { name: "Run Draft DDR" }).click();
      await page.locator("#workflow-dialog").waitFor({ state: "hidden" });
      await page.locator('#artifacts li:has-text("EDG-001")').waitFor();
      assert.match(await lastMessage(page, "workflow"), /draft_ddr/);
    });

    it("finds the same conversation again after a reload", async () => {
      const sessionId = await page.locator("#session-id").innerText();
      const entries = await page.locator("#conversation > li").count();
      await page.reload();
      await page.locator("#app").waitFor({ state: "visible" });
      await page.waitForFunction((n) => document.querySelectorAll("#conversation > li").length >= n, entries);
      assert.equal(await page.locator("#session-id").innerText(), sessionId);
      assert.equal(await page.locator("#current-mode").innerText(), "Workspace");
      // Who and what was said (the message's tools, Copy and Edit, follow them).
      assert.deepEqual(
        await page
          .locator("#conversation > li.message.user")
          .first()
          .locator(":scope > .who, :scope > .content")
          .allInnerTexts(),
        ["You", "what modes are there?"],
      );
      assert.equal(await page.locator('#artifacts li:has-text("EDG-001")').count(), 1);
      await shot("reloaded");
    });

    it("puts a message the server refused back in the box while approvals wait", async () => {
      await page.locator("#composer-input").fill("write c.txt with never");
      await page.keyboard.press("Enter");
      await page.locator("#approval-dialog").waitFor({ state: "visible" });
      await page.keyboard.press("Escape");
      await page.locator("[data-review-approvals]").waitFor();
      await page.locator("#composer-input").fill("and one more thing");
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        () => (document.querySelector("#composer-input") as HTMLTextAreaElement).value === "and one more thing",
      );
      assert.match(await page.locator("#status-line").innerText(), /answer them before sending a new message/);
      await page.locator("#composer-input").fill("");
    });

    it("stops a turn that waits for approval, after the dialog was dismissed", async () => {
      await page.locator("[data-review-approvals]").waitFor();
      const turns = await completedTurns(page);
      await page.locator("#stop-turn").click();
      await waitForTurnAfter(page, turns);
      assert.equal(await page.locator("#status-line").innerText(), "The turn was cancelled.");
      assert.equal(await page.locator("[data-review-approvals]").count(), 0);
      assert.equal(await page.locator("#turn-bar").isHidden(), true);
    });

    it("branches into a new session in another mode and opens it from the message", async () => {
      const before = await page.locator("#session-id").innerText();
      await headerAction(page, "#open-workflows");
      await page.locator('#workflow-list [data-workflow-id="branch_session"]').click();
      await page.locator("#workflow-form").getByLabel("mode (required)").selectOption("ddr_authoring");
      await page.locator("#workflow-form").getByRole("button", { name: /^Run / }).click();
      await page.locator("#workflow-dialog").waitFor({ state: "hidden" });
      await page.locator("[data-open-session]").click();
      await page.waitForFunction((old) => document.querySelector("#session-id")?.textContent !== old, before);
      assert.equal(await page.locator("#current-mode").innerText(), "DDR Authoring");
      assert.equal(await page.locator("#conversation > li").count(), 0);
    });

    it("fits the screen without sideways scrolling", async () => {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    });

    it("logged no console errors or warnings", () => {
      assert.deepEqual(problems, []);
    });
  });
}

describe("the console from the keyboard alone", () => {
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(worker.url);
  });

  after(async () => {
    await context?.close();
  });

  /** Presses Tab until the element matching `selector` has the focus, as a person would. */
  async function tabTo(selector: string): Promise<void> {
    for (let presses = 0; presses < 25; presses += 1) {
      if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
      await page.keyboard.press("Tab");
    }
    assert.fail(`Tab never reached ${selector}`);
  }

  async function activate(selector: string): Promise<void> {
    await tabTo(selector);
    await page.keyboard.press("Enter");
  }

  it("signs in, approves a write and completes its hand-off without a mouse", async () => {
    await page.waitForFunction(() => document.activeElement?.id === "api-key");
    await page.keyboard.type("dev-key");
    await page.keyboard.press("Enter");
    await page.locator("#app").waitFor({ state: "visible" });
    await page.waitForFunction(() => document.activeElement?.id === "composer-input");
    await tabTo("#mode-picker");
    // A closed select takes a letter as "the option starting with it": W is Workspace.
    await page.keyboard.press("w");
    await page.waitForFunction(
      () => (document.querySelector("#mode-picker") as HTMLSelectElement).value === "workspace",
    );
    await activate('#mode-form button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#current-mode")?.textContent === "Workspace");
    await page.locator("#composer-input").focus();
    await page.keyboard.type("write k.txt with keys");
    await page.keyboard.press("Enter");
    await page.locator("#approval-dialog").waitFor({ state: "visible" });
    await activate("#approve-all");
    await activate("#submit-decisions");
    await page.locator("#client-tools article.client-tool").waitFor();
    // The request's result box has the focus: the client's result is typed there.
    await page.waitForFunction(() => document.activeElement?.matches("#client-tools textarea") === true);
    await page.keyboard.type(JSON.stringify({ path: "k.txt", bytesWritten: 4 }));
    const turns = await completedTurns(page);
    await activate("#client-tools button:not(.quiet)");
    await waitForTurnAfter(page, turns);
    assert.match(await lastMessage(page, "assistant"), /Wrote 4 bytes to k\.txt/);
  });
});

describe("a redraw that answers late, in the console", () => {
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    // The socket's first frame makes the page redraw: the test starts once that redraw is drawn.
    const socketState = new Promise<void>((resolve) => {
      page.on("websocket", (socket) => {
        socket.on("framereceived", ({ payload }) => {
          if ((JSON.parse(String(payload)) as Frame).type === "session_state") resolve();
        });
      });
    });
    await page.goto(worker.url);
    await page.locator("#api-key").fill("dev-key");
    await page.keyboard.press("Enter");
    await page.locator("#app").waitFor({ state: "visible" });
    await socketState;
    await page.waitForLoadState("networkidle");
  });

  after(async () => {
    await context?.close();
  });

  it("keeps the approval dialog open when a redraw asked for before the approval answers after it", async () => {
    // The mode switch's redraw (GET of the session) is held until the approval has been asked for, as on a slow
    // network: the session it draws has no call waiting yet.
    let holdNextRead = false;
    let releaseRead = () => {};
    const released = new Promise<void>((resolve) => {
      releaseRead = resolve;
    });
    let heldAnswered: () => void = () => {};
    const heldDone = new Promise<void>((resolve) => {
      heldAnswered = resolve;
    });
    await page.route(/\/context\/sessions\/[^/]+(\/workflows\/switch_mode)?$/, async (route) => {
      const request = route.request();
      if (request.method() === "POST") {
        // The switch's own redraw is the next read of the session.
        holdNextRead = true;
        return route.continue();
      }
      if (!holdNextRead) return route.continue();
      holdNextRead = false;
      const response = await route.fetch();
      await released;
      await route.fulfill({ response });
      heldAnswered();
    });
    await page.locator("#mode-picker").selectOption("workspace");
    await page.locator('#mode-form button[type="submit"]').click();
    await page.waitForFunction(() => document.querySelector("#current-mode")?.textContent === "Workspace");
    await page.locator("#composer-input").fill("write late.txt with slow");
    await page.keyboard.press("Enter");
    await page.locator("#approval-dialog").waitFor({ state: "visible" });
    releaseRead();
    await heldDone;
    // Whatever the page does with the late answer happens within a frame or two of it.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 100))));
    assert.equal(await page.locator("#approval-dialog").isVisible(), true);
    await page.unrouteAll();
  });
});

describe("MCP tools in the console", () => {
  let everything: Awaited<ReturnType<typeof startEverythingServer>>;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    // The reference server on loopback, registered and offered by a mode, as the README shows.
    everything = await startEverythingServer();
    await put("/admin/mcp-servers/everything", {
      url: everything.url,
      description: "The MCP reference server.",
      approval: "unless_read_only",
      tools: ["echo", "get-sum", "trigger-elicitation-request"],
    });
    await put("/admin/modes/mcp_tools", {
      displayName: "MCP Tools",
      description: "The reference MCP server's tools.",
      systemPrompt: "Use the tools the user names.",
      tools: ["mcp:everything"],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      // The one refusal provoked on purpose: an answer to the server's question that does not fit its schema.
      if (message.text().includes("status of 400") && message.location().url.includes("/elicitations/")) return;
      problems.push(`${message.text()} (${message.location().url})`);
    });
    page.on("pageerror", (error) => problems.push(`pageerror: ${error.stack ?? error.message}`));
    await page.goto(worker.url);
    await page.locator("#api-key").fill("dev-key");
    await page.keyboard.press("Enter");
    await page.locator("#app").waitFor({ state: "visible" });
    await page.locator("#mode-picker").selectOption("mcp_tools");
    await page.locator("#mode-form button[type=submit]").click();
    await page.waitForFunction(() => document.querySelector("#current-mode")?.textContent === "MCP Tools");
  });

  after(async () => {
    await context?.close();
    await everything?.stop();
  });

  it("lists an MCP tool call with its server and tool, and answers with its result", async () => {
    const turns = await completedTurns(page);
    await page.locator("#composer-input").fill("use get-sum with 2 and 40");
    await page.keyboard.press("Enter");
    await waitForTurnAfter(page, turns);
    assert.match(await lastMessage(page, "assistant"), /The sum of 2 and 40 is 42\./);
    await page.locator("#working").evaluate((details) => {
      (details as HTMLDetailsElement).open = true;
    });
    assert.equal(
      await page.locator("#tool-calls > li .call-source").first().innerText(),
      "MCP server everything · tool get-sum",
    );
  });

  it("asks for approval naming the server, then shows the server's question as a form and sends the answer", async () => {
    await page.locator("#composer-input").fill("trigger elicitation request");
    await page.keyboard.press("Enter");
    await page.locator("#approval-dialog").waitFor({ state: "visible" });
    assert.equal(
      await page.locator("#approval-calls .call-source").innerText(),
      "MCP server everything · tool trigger-elicitation-request",
    );
    await page.locator("#approve-all").click();
    await page.locator("#submit-decisions").click();
    const dialog = page.locator("#elicitation-dialog");
    await dialog.waitFor({ state: "visible" });
    assert.equal(
      await page.locator("#elicitation-source").innerText(),
      "MCP server everything asks this for its tool trigger-elicitation-request.",
    );
    await page.getByLabel("String (name) (required)").fill("Dana");
    await page.getByLabel("Integer (integer)").fill("500");
    await page.screenshot({ path: `${SHOTS}/elicitation-form.png` });
    await page.getByRole("button", { name: "Send answer" }).click();
    await page.locator('[data-field-error="integer"]').filter({ hasText: /100/ }).waitFor();
    await page.getByLabel("Integer (integer)").fill("7");
    const answered = await completedTurns(page);
    await page.getByRole("button", { name: "Send answer" }).click();
    await dialog.waitFor({ state: "hidden" });
    await waitForTurnAfter(page, answered);
    // The server's answer lists what the user gave, drawn as a Markdown list.
    const given = await page.locator("#conversation > li.message.assistant").last().locator("li").allInnerTexts();
    assert.ok(given.includes("Name: Dana") && given.includes("Favorite Integer: 7"), given.join(" | "));
    assert.deepEqual(problems, []);
  });
});

describe("a model stream that breaks mid-answer, in the console", () => {
  let upstream: Awaited<ReturnType<typeof startScriptedUpstream>>;
  let context: BrowserContext;
  let page: Page;
  const frames: Frame[] = [];

  before(async () => {
    // A mode on a route whose stream breaks after its first words, falling back to a route that answers slowly.
    upstream = await startScriptedUpstream();
    await put("/admin/model-routes/steady", {
      provider: "openai_compatible",
      model: "steady-model",
      baseUrl: `${upstream.url}/v1`,
    });
    await put("/admin/model-routes/flaky", {
      provider: "openai_compatible",
      model: "flaky-model",
      baseUrl: `${upstream.url}/v1`,
      fallbacks: ["steady"],
    });
    await put("/admin/modes/routed", {
      displayName: "Routed",
      description: "A mode on the flaky route.",
      systemPrompt: "Answer.",
      tools: [],
      modelRoute: "flaky",
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on("websocket", (socket) => {
      socket.on("framereceived", ({ payload }) => frames.push(JSON.parse(String(payload)) as Frame));
    });
    await page.goto(worker.url);
    await page.locator("#api-key").fill("dev-key");
    await page.keyboard.press("Enter");
    await page.locator("#app").waitFor({ state: "visible" });
    await page.locator("#mode-picker").selectOption("routed");
    await page.locator("#mode-form button[type=submit]").click();
    await page.waitForFunction(() => document.querySelector("#current-mode")?.textContent === "Routed");
  });

  after(async () => {
    await context?.close();
    await upstream?.close();
  });

  it("drops the broken stream's words and shows only the answer that starts again on the fallback", async () => {
    const partial = {
      id: "c1",
      object: "chat.completion.chunk",
      created: 1,
      model: "flaky-model",
      choices: [{ index: 0, delta: { content: "Broken words " }, finish_reason: null }],
    };
    const script = upstream.createScript([
      { type: "sse", events: [`data: ${JSON.stringify(partial)}`], eventDelayMs: 300, end: "destroy" },
      { type: "completion", content: "The whole answer, from the fallback.", chunkSize: 4, chunkDelayMs: 150 },
    ]);
    const turns = await completedTurns(page);
    await page.locator("#composer-input").fill(`Say something. ${script.marker}`);
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector("#streaming")?.textContent?.startsWith("The whole"));
    assert.equal((await page.locator("#streaming").textContent())?.includes("Broken"), false);
    await waitForTurnAfter(page, turns);
    // The answer's own words (its Timeline button comes after them).
    const answer = (
      await page.locator("#conversation > li.message.assistant").last().locator(".content").innerText()
    ).trim();
    assert.deepEqual(
      [answer.endsWith("The whole answer, from the fallback."), answer.includes("Broken")],
      [true, false],
    );
    const restart = frames.find((f) => f.type === "assistant_restarted") as
      | (Frame & Record<string, unknown>)
      | undefined;
    assert.deepEqual(
      [restart?.discardedChars, restart?.failedRoute, restart?.route],
      ["Broken words ".length, "flaky", "steady"],
    );
  });
});

describe("the admin page", () => {
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  async function api(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${worker.url}${path}`, {
      method,
      headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  before(async () => {
    // A few model calls through the passthrough (the offline demo model), for the usage chart.
    for (let i = 0; i < 3; i++) {
      const response = await api("POST", "/v1/chat/completions", {
        model: "aptix-offline-demo",
        messages: [{ role: "user", content: `hello ${i}` }],
      });
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    }
    context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`${message.text()} (${message.location().url})`);
    });
    page.on("pageerror", (error) => problems.push(`pageerror: ${error.stack ?? error.message}`));
    page.on("dialog", (dialog) => void dialog.accept());
    await page.goto(worker.url);
    await page.locator("#api-key").fill("dev-key");
    await page.keyboard.press("Enter");
    // The Admin link shows once the key's admin scope is known.
    await page.locator("#open-admin").waitFor({ state: "attached" });
    await page.waitForFunction(() => document.querySelector("#open-admin")?.hasAttribute("hidden") === false);
    await headerAction(page, "#open-admin");
    // Typed into once its first loads are done: keys typed while they were in flight once went missing.
    await adminPageReady(page);
  });

  after(async () => {
    await api("PUT", "/admin/budget", { tokensPerDay: null, tokensPerMonth: null, costPerMonthUsd: null });
    await context?.close();
  });

  it("creates a key from the keyboard alone and shows its secret once", async () => {
    // Keys typed into the field itself (each focuses it first), then Enter there submits the form.
    const name = page.locator("#new-key-name");
    await name.pressSequentially("e2e key");
    // Where the keys went if not into the field (this once read '' in a full run, under load): said on a failure.
    const typed = await page.evaluate(() => ({
      value: document.querySelector<HTMLInputElement>("input#new-key-name")?.value,
      focused: document.activeElement?.id || document.activeElement?.tagName,
      path: location.pathname,
      busy: document.querySelector("#admin")?.getAttribute("aria-busy"),
    }));
    assert.equal(typed.value, "e2e key", JSON.stringify(typed));
    await name.press("Enter");
    // The secret, or the page's own account of why not (a refusal is said in the status line).
    await page.waitForFunction(
      () =>
        !document.querySelector("#new-key-secret")?.hasAttribute("hidden") ||
        document.querySelector("#admin-status")?.classList.contains("error"),
    );
    assert.equal(await page.locator("#admin-status.error").count(), 0, await page.locator("#admin-status").innerText());
    const secret = (await page.locator("#new-key-value").innerText()).trim();
    assert.match(secret, /^ak_/);
    const check = await fetch(`${worker.url}/modes`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(check.status, 200);
    await page.locator("#keys-body tr", { hasText: "e2e key" }).waitFor();
    await page.reload();
    await adminPageReady(page);
    assert.equal(await page.locator("#new-key-secret").isVisible(), false);
    assert.equal((await page.content()).includes(secret), false);
  });

  it("revokes a key, which is refused at once", async () => {
    const created = (await (await api("POST", "/admin/keys", { name: "to revoke" })).json()) as { secret: string };
    await page.reload();
    const row = page.locator("#keys-body tr", { hasText: "to revoke" });
    await row.getByRole("button", { name: "Revoke to revoke" }).click();
    await row.waitFor({ state: "detached" });
    const refused = await fetch(`${worker.url}/modes`, { headers: { authorization: `Bearer ${created.secret}` } });
    assert.equal(refused.status, 401);
  });

  it("charts the tokens per day of the calls made, with the figures as a table", async () => {
    await page.locator("#usage-chart canvas").waitFor();
    await page.locator("#usage-table summary, details:has(#usage-table) > summary").first().click();
    const rows = await page.locator("#usage-body tr").allInnerTexts();
    assert.ok(
      rows.some((r) => r.includes("aptix-offline-demo")),
      `a row for the demo model, got ${JSON.stringify(rows)}`,
    );
    assert.match(await page.locator("#usage-caption").innerText(), /tokens in \d+ calls/);
    await page.screenshot({ path: `${SHOTS}/admin-narrow.png`, fullPage: true });
  });

  it("shows each model route's live health, the offline demo route passing", async () => {
    const row = page.locator("#health-body tr", { hasText: "default" });
    await row.waitFor();
    assert.match(await row.innerText(), /ok/);
    assert.match(await row.innerText(), /offline demo model/);
  });

  it("shows the share of the input read from the prompt cache", async () => {
    // The offline demo model caches nothing: its usage rows as the server would send them for a model that does.
    await page.route("**/admin/usage?groupBy=day*", async (route) => {
      if (route.request().url().includes("format=csv")) return route.continue();
      const response = await route.fetch();
      const sent = (await response.json()) as { rows: { promptTokens: number }[] };
      const rows = sent.rows.map((r) => ({ ...r, cachedInputTokens: Math.floor(r.promptTokens / 2) }));
      await route.fulfill({ response, json: { ...sent, rows } });
    });
    await page.reload();
    await adminPageReady(page);
    await page.locator("details:has(#usage-table) > summary").click();
    assert.match((await page.locator("#usage-body tr").allInnerTexts()).join("\n"), /\(5\d%\)|\(4\d%\)/);
    assert.match(await page.locator("#usage-caption").innerText(), /% of the input from the prompt cache/);
    await page.unroute("**/admin/usage?groupBy=day*");
  });

  it("shows a refused guardrail list's error beside it, keeps the text, then saves the corrected list", async () => {
    const text = page.locator("#guardrails-json");
    await text.fill('[{"kind": "deny", "points": ["input"], "action": "block", "patterns": ["(unclosed"]}]');
    await page.getByRole("button", { name: "Save guardrails" }).click();
    await page.locator("#guardrails-status.error").waitFor();
    assert.match(await page.locator("#guardrails-status").innerText(), /guardrails\[0\]\.patterns\[0\]/);
    assert.match(await text.inputValue(), /unclosed/);
    await text.fill('[{"kind": "pii", "points": ["input"], "action": "mask"}]');
    await page.getByRole("button", { name: "Save guardrails" }).click();
    await page.locator("#guardrails-status:not(.error)", { hasText: "Saved." }).waitFor();
    const saved = (await (await api("GET", "/admin/guardrails")).json()) as { guardrails: { name: string }[] };
    assert.deepEqual(
      saved.guardrails.map((g) => g.name),
      ["pii"],
    );
    await api("PUT", "/admin/guardrails", { guardrails: [] });
    // The browser logs the refused PUT (a 400 this test asked for): not a problem of the page.
    const deliberate = problems.findIndex((p) => p.includes("status of 400") && p.includes("/admin/guardrails"));
    if (deliberate >= 0) problems.splice(deliberate, 1);
  });

  it("fits a phone's screen without sideways scrolling", async () => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  });

  it("shows a budget refusal to the user in the chat view", async () => {
    await page.locator("#budget-day").fill("1");
    await page.locator("#budget-form button[type=submit]").click();
    await page.locator("#budget-use meter").first().waitFor();
    await page.goto(worker.url);
    await page.locator("#app").waitFor({ state: "visible" });
    await page.locator("#composer-input").fill("what modes are there?");
    await page.keyboard.press("Enter");
    await page.locator("#status-line.error").waitFor();
    assert.match(await page.locator("#status-line").innerText(), /budget of this organization is spent/);
    assert.deepEqual(
      problems.filter((p) => !p.includes("status of 429")),
      [],
    );
  });
});

describe("the API reference at /docs", () => {
  it("takes the console's sign-in and the console's styles: no key asked again", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    try {
      await signInWithDevKey(page, worker.url);
      await page.locator("#open-docs").click();
      await page.waitForURL(/\/docs\/$/);
      await page.locator(".opblock").first().waitFor({ timeout: 15_000 });
      assert.equal(await page.locator("#docs-key-form").isHidden(), true, "the key form stays folded");
      const look = await page.evaluate(() => ({
        header: getComputedStyle(document.querySelector("header.top") ?? document.body).borderBottomStyle,
        font: getComputedStyle(document.body).fontFamily,
      }));
      assert.equal(look.header, "solid", "the console's header");
      assert.match(look.font, /system-ui/, "the console's font");
      await page.screenshot({ path: `${SHOTS}/docs-signed-in.png` });
    } finally {
      await context.close();
    }
  });

  it("renders every route of /openapi.json from the server's own assets, with no request leaving the machine", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const origin = new URL(worker.url).origin;
    const elsewhere: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(origin) && !request.url().startsWith("data:")) elsewhere.push(request.url());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    try {
      await page.goto(`${worker.url}/docs/`);
      await page.locator("#docs-key").fill("dev-key");
      await page.getByRole("button", { name: "Load the reference" }).click();
      await page.locator(".opblock").first().waitFor({ timeout: 15_000 });
      const response = await fetch(`${worker.url}/openapi.json`, { headers: { authorization: "Bearer dev-key" } });
      const document = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
      const operations = Object.entries(document.paths)
        .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
        .sort();
      await page.screenshot({ path: `${SHOTS}/docs.png` });
      assert.deepEqual(await operationsReachedByScrolling(page), operations);
      assert.deepEqual(elsewhere, []);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});

/**
 * Every operation the reference shows, read while scrolling it from top to bottom. From 150 rows (tags and operations)
 * Swagger UI (5.33 and later) keeps only the rows near the viewport in the page, so a count of the page's operations
 * at any one moment is not what a reader can reach.
 */
async function operationsReachedByScrolling(page: Page): Promise<string[]> {
  const seen = new Set<string>();
  for (let previous = -1; ; ) {
    const rows = await page
      .locator(".opblock")
      .evaluateAll((blocks) =>
        blocks.map(
          (block) =>
            `${block.querySelector(".opblock-summary-method")?.textContent ?? ""} ${block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? ""}`,
        ),
      );
    for (const row of rows) seen.add(row);
    const scrolled = await page.evaluate(() => {
      window.scrollBy(0, window.innerHeight * 0.8);
      return window.scrollY;
    });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    if (scrolled === previous) return [...seen].sort();
    previous = scrolled;
  }
}

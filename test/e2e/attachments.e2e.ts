// Attachments in the console, in a real browser (Debian's Chromium) against `wrangler dev`: a text file chosen with
// the Attach button, dropped on the composer or pasted into the message box reaches the model (the scripted
// upstream records what it was sent); an oversized or binary file is refused with the stated limit; an image is
// refused on a text-only mode (at once, or by the server when the mode changed after it was attached, the draft
// kept), and reaches a mode whose route reads images as an image part. Screenshots go to test-results/e2e/.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { type ScriptedUpstream, startScriptedUpstream } from "../upstream/scripted-upstream.ts";
import {
  adminPut,
  collectProblems,
  completedTurns,
  launchChromium,
  scriptedMode,
  signInWithDevKey,
  waitForTurnAfter,
} from "./support.ts";

const SHOTS = "test-results/e2e";

/** A 1x1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

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
  // A mode whose route reads images.
  await adminPut(worker.url, "/admin/model-routes/vision", {
    provider: "openai_compatible",
    model: "vision-model",
    baseUrl: `${upstream.url}/v1`,
    inputModalities: ["text", "image"],
  });
  await adminPut(worker.url, "/admin/modes/vision", {
    displayName: "Vision",
    description: "A mode whose model reads images.",
    systemPrompt: "Answer.",
    tools: [],
    modelRoute: "vision",
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

/** A fresh page signed in with the dev-key, in mode `mode` (key, display name); closed after `test`. */
async function inMode(
  mode: [string, string],
  test: (opened: Opened) => Promise<void>,
  viewport = { width: 1280, height: 900 },
): Promise<void> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  collectProblems(page, problems);
  try {
    await signInWithDevKey(page, worker.url);
    await switchMode(page, ...mode);
    await test({ context, page, problems });
  } finally {
    await context.close();
  }
}

/** Switches the session's mode with the picker, and waits until the workflow's answer is drawn. */
async function switchMode(page: Page, key: string, name: string): Promise<void> {
  const ran = await page.locator("#conversation > li.message.workflow").count();
  await page.locator("#mode-picker").selectOption(key);
  await page.locator("#mode-form button[type=submit]").click();
  await page.waitForFunction((shown) => document.querySelector("#current-mode")?.textContent === shown, name);
  await page.waitForFunction((n) => document.querySelectorAll("#conversation > li.message.workflow").length > n, ran);
}

/** The chips of the files the composer holds, as they read. */
const chips = (page: Page) => page.locator("#attachment-chips > li > span").allInnerTexts();

/** The composer's chips once `count` are drawn (a file is read before its chip appears). */
async function chipsOnceDrawn(page: Page, count: number): Promise<string[]> {
  await page
    .locator("#attachment-chips > li > span")
    .nth(count - 1)
    .waitFor();
  return chips(page);
}

/** The composer's note once it says something (a file is read before it is refused). */
async function noteOnceShown(page: Page): Promise<string> {
  await page.waitForFunction(() => (document.querySelector("#attach-note")?.textContent ?? "").trim() !== "");
  return page.locator("#attach-note").innerText();
}

/** Sends what the composer holds and waits until the turn completed and the page redrew the session. */
async function send(page: Page, text: string): Promise<void> {
  const turns = await completedTurns(page);
  await page.locator("#composer-input").fill(text);
  await page.keyboard.press("Enter");
  await waitForTurnAfter(page, turns);
}

type SentPart = { type: string; text?: string; image_url?: { url: string } };

/** The last user message of the last request the script's upstream received. */
function lastUserSent(scriptId: string): string | SentPart[] | undefined {
  const body = JSON.parse(upstream.requests(scriptId).at(-1)?.body ?? "{}") as {
    messages?: { role: string; content: string | SentPart[] }[];
  };
  return body.messages?.findLast((m) => m.role === "user")?.content;
}

/** Drops (or pastes, into the message box) a file built in the page. */
async function dropFile(page: Page, how: "drop" | "paste", name: string, type: string, text: string): Promise<void> {
  await page.evaluate(
    ({ how, name, type, text }) => {
      const data = new DataTransfer();
      data.items.add(new File([text], name, { type }));
      if (how === "drop") {
        const composer = document.querySelector("#composer");
        composer?.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
        composer?.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
      } else {
        document
          .querySelector("#composer-input")
          ?.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
      }
    },
    { how, name, type, text },
  );
}

describe("text and code files", () => {
  it("sends a file chosen with the Attach button to the model, named and fenced, and shows it under the message", async () => {
    await inMode(["scripted", "Scripted"], async ({ page, problems }) => {
      const script = upstream.createScript([{ type: "completion", content: "It is a short note." }]);
      const text = "# Notes\n\nShip on Friday.";
      await page.locator("#attach-input").setInputFiles({
        name: "notes.md",
        mimeType: "text/markdown",
        buffer: Buffer.from(text),
      });
      assert.deepEqual(await chipsOnceDrawn(page, 1), [`File: notes.md (${text.length} bytes)`]);
      await send(page, `Summarise this ${script.marker}`);
      assert.equal(
        lastUserSent(script.id),
        `Summarise this ${script.marker}\n\nAttached file \`notes.md\` (text/markdown):\n\`\`\`\n${text}\n\`\`\``,
      );
      const shown = page.locator("#conversation li.message.user").last().locator(".attachment-file summary");
      assert.equal(await shown.innerText(), `File: notes.md (${text.length} bytes)`);
      assert.deepEqual(await chips(page), [], "the composer's files went with the message");
      await page.screenshot({ path: `${SHOTS}/attachments-text-file.png` });
      assert.deepEqual(problems, []);
    });
  });

  it("attaches a file dropped on the composer, and it reaches the model", async () => {
    await inMode(["scripted", "Scripted"], async ({ page }) => {
      const script = upstream.createScript([{ type: "completion", content: "ok" }]);
      await dropFile(page, "drop", "app.ts", "video/mp2t", "export const answer = 42;\n");
      assert.deepEqual(await chipsOnceDrawn(page, 1), ["File: app.ts (26 bytes)"]);
      await send(page, `Review ${script.marker}`);
      const sent = lastUserSent(script.id);
      assert.ok(typeof sent === "string" && sent.includes("Attached file `app.ts` (text/plain):"), String(sent));
      assert.ok(typeof sent === "string" && sent.includes("export const answer = 42;"));
    });
  });

  it("attaches a file pasted into the message box instead of typing it", async () => {
    await inMode(["scripted", "Scripted"], async ({ page }) => {
      await dropFile(page, "paste", "config.json", "application/json", '{"port": 8787}');
      assert.deepEqual(await chipsOnceDrawn(page, 1), ["File: config.json (14 bytes)"]);
      assert.equal(await page.locator("#composer-input").inputValue(), "");
    });
  });

  it("removes a file with its chip's Remove button", async () => {
    await inMode(["scripted", "Scripted"], async ({ page }) => {
      await dropFile(page, "paste", "a.txt", "text/plain", "a");
      await page.getByRole("button", { name: "Remove a.txt" }).click();
      assert.deepEqual(await chips(page), []);
    });
  });

  it("refuses a text file over 100 KB, saying the limit the page states", async () => {
    await inMode(["scripted", "Scripted"], async ({ page }) => {
      assert.match(await page.locator("#attach-limits").innerText(), /Text or code files up to 100 KB each/);
      await page.locator("#attach-input").setInputFiles({
        name: "big.log",
        mimeType: "text/plain",
        buffer: Buffer.alloc(100_001, "x"),
      });
      assert.equal(
        await noteOnceShown(page),
        "big.log was not attached: it is 100,001 bytes; text files may be up to 100,000 bytes (100 KB).",
      );
      assert.deepEqual(await chips(page), []);
    });
  });

  it("refuses a binary file", async () => {
    await inMode(["scripted", "Scripted"], async ({ page }) => {
      await page.locator("#attach-input").setInputFiles({
        name: "tool.exe",
        mimeType: "application/octet-stream",
        buffer: Buffer.from([0x4d, 0x5a, 0x00, 0x01]),
      });
      assert.equal(
        await noteOnceShown(page),
        "tool.exe was not attached: it is not a text or code file (or an image). Attach text, code, JSON or Markdown files.",
      );
      assert.deepEqual(await chips(page), []);
    });
  });

  it("refuses a file named as text whose bytes are binary", async () => {
    await inMode(["scripted", "Scripted"], async ({ page }) => {
      await page.locator("#attach-input").setInputFiles({
        name: "data.txt",
        mimeType: "text/plain",
        buffer: Buffer.from([0x00, 0xff, 0xfe, 0x41]),
      });
      assert.equal(
        await noteOnceShown(page),
        "data.txt was not attached: it is not text (it looks like a binary file).",
      );
    });
  });
});

describe("images", () => {
  it("refuses an image at once on a mode whose model does not accept images", async () => {
    await inMode(["scripted", "Scripted"], async ({ page }) => {
      await page.locator("#attach-input").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG });
      assert.equal(await noteOnceShown(page), "dot.png was not attached: the mode's model does not accept images.");
      assert.deepEqual(await chips(page), []);
      await page.screenshot({ path: `${SHOTS}/attachments-image-refused.png` });
    });
  });

  it("sends an image to a mode whose model reads images as an image part", async () => {
    await inMode(["vision", "Vision"], async ({ page, problems }) => {
      const script = upstream.createScript([{ type: "completion", content: "A single dot." }]);
      await page.locator("#attach-input").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG });
      assert.deepEqual(await chipsOnceDrawn(page, 1), ["Image: dot.png (70 bytes)"]);
      await page.screenshot({ path: `${SHOTS}/attachments-image-chip.png` });
      await send(page, `What is this? ${script.marker}`);
      assert.deepEqual(lastUserSent(script.id), [
        { type: "text", text: `What is this? ${script.marker}` },
        { type: "text", text: "Attached image `dot.png` (image/png):" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
      ]);
      const shown = page.locator("#conversation li.message.user").last().locator(".message-attachments li");
      assert.deepEqual(await shown.allInnerTexts(), ["Image: dot.png (70 bytes)"]);
      await page.screenshot({ path: `${SHOTS}/attachments-image.png` });
      assert.deepEqual(problems, []);
    });
  });

  it("keeps the draft when the server refuses an image (the mode changed to one without images after it was attached)", async () => {
    await inMode(["vision", "Vision"], async ({ page }) => {
      await page.locator("#attach-input").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG });
      await switchMode(page, "scripted", "Scripted");
      await page.locator("#composer-input").fill("What is this?");
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        () => document.querySelector("#status-line")?.textContent === "The mode's model does not accept images.",
      );
      assert.equal(await page.locator("#composer-input").inputValue(), "What is this?");
      assert.deepEqual(await chipsOnceDrawn(page, 1), ["Image: dot.png (70 bytes)"]);
    });
  });
});

describe("on a phone", () => {
  it("attaches a file with the Attach button at 390 px, shows its chip on the screen, and it reaches the model", async () => {
    await inMode(
      ["scripted", "Scripted"],
      async ({ page, problems }) => {
        const script = upstream.createScript([{ type: "completion", content: "Read it." }]);
        await page.locator("#attach-input").setInputFiles({
          name: "todo.txt",
          mimeType: "text/plain",
          buffer: Buffer.from("call the bank"),
        });
        assert.deepEqual(await chipsOnceDrawn(page, 1), ["File: todo.txt (13 bytes)"]);
        const chip = await page.locator("#attachment-chips > li").first().boundingBox();
        assert.ok(
          chip && chip.x >= 0 && chip.x + chip.width <= 390,
          `the chip is on the screen (${JSON.stringify(chip)})`,
        );
        await send(page, `What is on my list? ${script.marker}`);
        const sent = lastUserSent(script.id);
        assert.ok(typeof sent === "string" && sent.includes("Attached file `todo.txt` (text/plain):"), String(sent));
        assert.ok(typeof sent === "string" && sent.includes("call the bank"));
        assert.ok(
          (await page.evaluate(() => document.documentElement.scrollWidth)) <= 390,
          "the page does not scroll sideways",
        );
        await page.screenshot({ path: `${SHOTS}/attachments-phone.png` });
        assert.deepEqual(problems, []);
      },
      { width: 390, height: 844 },
    );
  });
});

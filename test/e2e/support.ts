// What the browser test files share: Debian's Chromium, the admin writes they set up with, and the page's turn
// counter (the console counts the turns it has seen complete and redrawn, in #app's data-completed-turns).
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's Chromium (never a downloaded browser), headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"],
  });
}

/** Writes an admin resource (a route, a mode, an MCP server) with the local dev-key; it must be stored. */
export async function adminPut(baseUrl: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "PUT",
    headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.ok(response.status === 201 || response.status === 200, await response.text());
}

/** A route to a scripted upstream, and a mode on it with `tools`. */
export async function scriptedMode(
  baseUrl: string,
  upstreamUrl: string,
  mode: { key: string; displayName: string; tools: string[]; route: string },
): Promise<void> {
  await adminPut(baseUrl, `/admin/model-routes/${mode.route}`, {
    provider: "openai_compatible",
    model: `${mode.route}-model`,
    baseUrl: `${upstreamUrl}/v1`,
  });
  await adminPut(baseUrl, `/admin/modes/${mode.key}`, {
    displayName: mode.displayName,
    description: `A mode on the ${mode.route} route.`,
    systemPrompt: "Answer.",
    tools: mode.tools,
    modelRoute: mode.route,
  });
}

/** How many turns the page has seen complete (and redrawn the session after). */
export async function completedTurns(page: Page): Promise<number> {
  return Number((await page.locator("#app").getAttribute("data-completed-turns")) ?? 0);
}

export async function waitForTurnAfter(page: Page, completedBefore: number): Promise<void> {
  await page.waitForFunction(
    (n) => Number(document.querySelector("#app")?.getAttribute("data-completed-turns") ?? 0) > n,
    completedBefore,
  );
}

/** Notes the page's console errors and warnings and its uncaught errors in `problems` (a test expects none). */
export function collectProblems(page: Page, problems: string[]): void {
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning")
      problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.stack ?? error.message}`));
}

/** Opens the console at `url` and signs in with the local `dev-key`, until its socket is open. */
export async function signInWithDevKey(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator("#api-key").fill("dev-key");
  await page.keyboard.press("Enter");
  await page.locator("#app").waitFor({ state: "visible" });
  await page.waitForFunction(() => document.querySelector("#app")?.getAttribute("data-socket") === "open");
}

/** Waits until the admin page is shown with its first loads done (`#admin` no longer `aria-busy`). */
export async function adminPageReady(page: Page): Promise<void> {
  await page.locator("#admin:not([aria-busy])").waitFor({ state: "visible" });
}

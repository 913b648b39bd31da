// @ts-check
// The console's admin page (keys with the admin scope): the org's keys (create, shown once; revoke; a budget),
// its budget against its limits, its usage over time as a chart (uPlot, served from our own assets) with the same
// figures as a table, its modes (edited by admin-modes.js) and the routes it may use (the deployment's and its own),
// the newest rows of the audit log, each model route's live health (GET /admin/health), and its webhook endpoints,
// disabled ones with why (admin-webhooks.js). A client of the admin API like any other.

import { loadEvalRuns } from "./admin-evals.js";
import { loadGuardrails } from "./admin-guardrails.js";
import { loadMemorySwitch } from "./admin-memory.js";
import { startModesEditor } from "./admin-modes.js";
import { loadWebhooks } from "./admin-webhooks.js";
import { ApiClient, ApiError, KEY_STORAGE } from "./js/api.js";
import { byId, h } from "./js/dom.js";

const UPLOT = "/vendor/uplot/uPlot.esm.js";

const el = {
  status: byId("admin-status"),
  admin: byId("admin"),
  newKeyForm: byId("new-key-form", HTMLFormElement),
  newKeyName: byId("new-key-name", HTMLInputElement),
  newKeyExpires: byId("new-key-expires", HTMLInputElement),
  newKeyTokens: byId("new-key-tokens", HTMLInputElement),
  newKeySecret: byId("new-key-secret"),
  newKeyValue: byId("new-key-value"),
  copyKey: byId("copy-key", HTMLButtonElement),
  keysBody: byId("keys-body"),
  usersBody: byId("users-body"),
  budgetUse: byId("budget-use"),
  budgetForm: byId("budget-form", HTMLFormElement),
  budgetDay: byId("budget-day", HTMLInputElement),
  budgetMonth: byId("budget-month", HTMLInputElement),
  budgetCost: byId("budget-cost", HTMLInputElement),
  usageBy: byId("usage-by", HTMLSelectElement),
  usageCsv: byId("usage-csv", HTMLButtonElement),
  usageChart: byId("usage-chart"),
  usageCaption: byId("usage-caption"),
  usageBody: byId("usage-body"),
  callsBody: byId("calls-body"),
  routesBody: byId("routes-body"),
  auditBody: byId("audit-body"),
  healthBody: byId("health-body"),
  healthCheck: byId("health-check", HTMLButtonElement),
};

/** @type {ApiClient} */
let api;
/** @type {{ destroy(): void } | null} */
let chart = null;

function say(text, isError = false) {
  el.status.textContent = text;
  el.status.classList.toggle("error", isError);
}

/** @param {number | null | undefined} value */
const number = (value) => (value === null || value === undefined ? "—" : value.toLocaleString("en"));

/** @param {HTMLInputElement} input */
const optionalNumber = (input) => (input.value === "" ? null : Number(input.value));

/** @param {{ tokens: number }} used @param {number | null} limit @param {string} label */
function meter(used, limit, label) {
  const text = limit
    ? `${number(used.tokens)} of ${number(limit)} ${label}`
    : `${number(used.tokens)} ${label} (no limit)`;
  return h(
    "p",
    { class: "budget-line" },
    limit
      ? h("meter", { min: 0, max: limit, value: Math.min(used.tokens, limit), "aria-label": text, title: text })
      : null,
    " ",
    text,
  );
}

/**
 * Names each cell's column in its data-label, for the stacked rows a phone shows (admin.css).
 * @param {HTMLElement} body a table's tbody
 */
function labelCells(body) {
  const names = [...(body.closest("table")?.querySelectorAll("thead th") ?? [])].map((th) => th.textContent ?? "");
  for (const row of body.querySelectorAll("tr"))
    for (const [i, cell] of [...row.children].entries()) cell.setAttribute("data-label", names[i] ?? "");
}

async function loadKeys() {
  const { keys } = await api.request("GET", "/admin/keys");
  el.keysBody.replaceChildren(
    ...keys.map((key) =>
      h(
        "tr",
        { "data-key-id": key.id },
        h("td", { text: key.name }),
        h("td", { text: key.user }),
        h("td", { text: key.scopes.join(", ") }),
        h("td", { text: key.expiresAt ? `${key.expiresAt.slice(0, 10)}${key.expired ? " (expired)" : ""}` : "never" }),
        h("td", {
          text: `${number(key.budget.day.tokens)} / ${key.budget.limits.tokensPerDay ? number(key.budget.limits.tokensPerDay) : "no limit"}`,
        }),
        h(
          "td",
          { class: "row-actions" },
          h("button", {
            type: "button",
            class: "quiet",
            text: "Set budget",
            // The name begins with the button's own words (what a voice user says to press it).
            "aria-label": `Set budget: the daily tokens of ${key.name}`,
            onclick: () => setKeyBudget(key),
          }),
          h("button", {
            type: "button",
            class: "danger",
            text: "Revoke",
            "aria-label": `Revoke ${key.name}`,
            onclick: () => revokeKey(key),
          }),
        ),
      ),
    ),
  );
  labelCells(el.keysBody);
}

const VIA = { api_key: "API key", browser_session: "sign-in", oauth: "MCP client", cloudflare_access: "Access" };

async function loadUsers() {
  const { users } = await api.request("GET", "/admin/users");
  el.usersBody.replaceChildren(
    ...users.map((user) =>
      h(
        "tr",
        { "data-user-id": user.id },
        h("td", { text: user.id }),
        h("td", { text: user.name ?? user.email ?? "—" }),
        h("td", { text: user.lastSeenAt.slice(0, 16).replace("T", " ") }),
        h("td", { text: VIA[user.lastSeenVia] ?? user.lastSeenVia ?? "—" }),
        h("td", { text: user.disabled ? "disabled" : "active" }),
        h(
          "td",
          { class: "row-actions" },
          h("button", {
            type: "button",
            class: user.disabled ? "quiet" : "danger",
            text: user.disabled ? "Enable" : "Disable",
            "aria-label": `${user.disabled ? "Enable" : "Disable"} ${user.id}`,
            onclick: () => setUserDisabled(user.id, !user.disabled),
          }),
        ),
      ),
    ),
  );
  labelCells(el.usersBody);
}

/** @param {string} id @param {boolean} disabled */
async function setUserDisabled(id, disabled) {
  if (disabled && !window.confirm(`Disable ${id}? Their keys stop working and their sign-ins end.`)) return;
  try {
    await api.request("PATCH", `/admin/users/${encodeURIComponent(id)}`, { disabled });
    say(`${id} is ${disabled ? "disabled" : "enabled"}.`);
    await loadUsers();
  } catch (error) {
    say(error instanceof ApiError ? error.message : String(error), true);
  }
}

/** @param {{ id: string, name: string, budget: { limits: { tokensPerDay: number | null, tokensPerMonth: number | null, costPerMonthUsd: number | null } } }} key */
async function setKeyBudget(key) {
  const answer = window.prompt(
    `Tokens per day for ${key.name} (empty: no limit)`,
    String(key.budget.limits.tokensPerDay ?? ""),
  );
  if (answer === null) return;
  const tokensPerDay = answer.trim() === "" ? null : Number(answer);
  try {
    // The other limits are sent as they are: a budget is replaced whole.
    await api.request("PATCH", `/admin/keys/${encodeURIComponent(key.id)}`, {
      budget: { ...key.budget.limits, tokensPerDay },
    });
    say(`The budget of ${key.name} is set.`);
    await loadKeys();
  } catch (error) {
    say(error instanceof ApiError ? error.message : String(error), true);
  }
}

/** @param {{ id: string, name: string }} key */
async function revokeKey(key) {
  if (!window.confirm(`Revoke ${key.name}? Its next request is refused.`)) return;
  try {
    await api.request("DELETE", `/admin/keys/${encodeURIComponent(key.id)}`);
    say(`${key.name} is revoked.`);
    await loadKeys();
  } catch (error) {
    say(error instanceof ApiError ? error.message : String(error), true);
  }
}

async function createKey(event) {
  event.preventDefault();
  const scopes = [...el.newKeyForm.querySelectorAll('input[name="scope"]:checked')].map(
    (input) => /** @type {HTMLInputElement} */ (input).value,
  );
  const tokensPerDay = optionalNumber(el.newKeyTokens);
  const body = {
    name: el.newKeyName.value,
    scopes,
    ...(el.newKeyExpires.value ? { expiresAt: `${el.newKeyExpires.value}T00:00:00Z` } : {}),
    ...(tokensPerDay ? { budget: { tokensPerDay } } : {}),
  };
  try {
    const { key, secret } = await api.request("POST", "/admin/keys", body);
    el.newKeyValue.textContent = secret;
    el.newKeySecret.hidden = false;
    el.copyKey.focus();
    el.newKeyForm.reset();
    say(`${key.name} is created.`);
    await loadKeys();
  } catch (error) {
    say(error instanceof ApiError ? error.message : String(error), true);
  }
}

async function loadBudget() {
  const { budget } = await api.request("GET", "/admin/budget");
  el.budgetDay.value = budget.limits.tokensPerDay ?? "";
  el.budgetMonth.value = budget.limits.tokensPerMonth ?? "";
  el.budgetCost.value = budget.limits.costPerMonthUsd ?? "";
  el.budgetUse.replaceChildren(
    meter(budget.day, budget.limits.tokensPerDay, `tokens today (${budget.day.period})`),
    meter(budget.month, budget.limits.tokensPerMonth, `tokens this month (${budget.month.period})`),
    h("p", {
      class: "budget-line",
      text: `US$ ${(budget.month.costMicros / 1e6).toFixed(2)} this month${budget.limits.costPerMonthUsd ? ` of ${budget.limits.costPerMonthUsd}` : ""}; ${number(budget.reserved.tokens)} tokens reserved by calls in flight.`,
    }),
  );
}

async function saveBudget(event) {
  event.preventDefault();
  try {
    await api.request("PUT", "/admin/budget", {
      tokensPerDay: optionalNumber(el.budgetDay),
      tokensPerMonth: optionalNumber(el.budgetMonth),
      costPerMonthUsd: optionalNumber(el.budgetCost),
    });
    say("The organization's limits are saved.");
    await loadBudget();
  } catch (error) {
    say(error instanceof ApiError ? error.message : String(error), true);
  }
}

/** The last 30 days, oldest first, as YYYY-MM-DD. */
function lastDays() {
  const today = Date.parse(new Date().toISOString().slice(0, 10));
  return Array.from({ length: 30 }, (_, i) => new Date(today - (29 - i) * 86_400_000).toISOString().slice(0, 10));
}

async function loadUsage() {
  const by = el.usageBy.value;
  const days = lastDays();
  const { rows } = await api.request("GET", `/admin/usage?groupBy=day&by=${by}&from=${days[0]}&to=${days.at(-1)}`);
  el.usageBody.replaceChildren(
    ...rows.map((row) =>
      h(
        "tr",
        {},
        h("td", { text: row.group }),
        h("td", { text: row.series || "(none)" }),
        h("td", { text: number(row.calls) }),
        h("td", { text: number(row.totalTokens) }),
        h("td", { text: cachedShare(row) }),
        h("td", { text: row.costUsd.toFixed(4) }),
        h("td", { text: number(row.errors) }),
      ),
    ),
  );
  const series = [...new Set(rows.map((row) => row.series || "(none)"))];
  const total = rows.reduce((sum, row) => sum + row.totalTokens, 0);
  const input = rows.reduce((sum, row) => sum + row.promptTokens, 0);
  const cached = rows.reduce((sum, row) => sum + row.cachedInputTokens, 0);
  const fromCache =
    input > 0 && cached > 0 ? ` (${Math.round((cached / input) * 100)}% of the input from the prompt cache)` : "";
  el.usageCaption.textContent = rows.length
    ? `${number(total)} tokens in ${number(rows.reduce((sum, row) => sum + row.calls, 0))} calls${fromCache}; one line per ${by}.`
    : "No model calls in the last 30 days.";
  el.usageChart.setAttribute("aria-label", `Tokens per day by ${by}: ${el.usageCaption.textContent}`);
  const data = [
    days.map((day) => Date.parse(day) / 1000),
    ...series.map((name) =>
      days.map((day) => rows.find((row) => row.group === day && (row.series || "(none)") === name)?.totalTokens ?? 0),
    ),
  ];
  const palette = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563"];
  const { default: UPlot } = await import(/* @vite-ignore */ UPLOT);
  chart?.destroy();
  el.usageChart.replaceChildren();
  chart = new UPlot(
    {
      width: Math.max(280, el.usageChart.clientWidth || 600),
      height: 240,
      series: [
        {},
        ...series.map((name, i) => ({
          label: name,
          stroke: palette[i % palette.length],
          width: 2,
          points: { show: true },
        })),
      ],
      // The value axis as wide as its longest figure, so a large one never runs into the axis's label.
      axes: [{}, { label: "tokens", size: valueAxisSize }],
    },
    data,
    el.usageChart,
  );
}

/**
 * The input tokens read from the prompt cache, and their share of the input ("—" when none were).
 * @param {{ promptTokens: number, cachedInputTokens: number }} row
 */
function cachedShare(row) {
  if (!row.cachedInputTokens) return "—";
  return `${number(row.cachedInputTokens)} (${Math.round((row.cachedInputTokens / Math.max(1, row.promptTokens)) * 100)}%)`;
}

/**
 * uPlot's `size` of a value axis: its ticks, its gap and its widest figure (uPlot's own auto-size recipe).
 * @param {{ axes: Array<{ ticks: { size: number }, gap: number, font: string[], _size: number }>, ctx: CanvasRenderingContext2D }} self
 * @param {string[] | null} values @param {number} axisIndex @param {number} cycle
 */
function valueAxisSize(self, values, axisIndex, cycle) {
  const axis = self.axes[axisIndex];
  if (!axis) return 50;
  if (cycle > 1) return axis._size;
  const widest = (values ?? []).reduce((longest, value) => (value.length > longest.length ? value : longest), "");
  self.ctx.font = axis.font[0] ?? self.ctx.font;
  return Math.ceil(axis.ticks.size + axis.gap + self.ctx.measureText(widest).width / devicePixelRatio);
}

/** Model calls the list shows: the newest, enough to find a slow turn just run. */
const RECENT_CALLS = 20;

/** The newest model calls; an agent call's "Where" links to its turn's waterfall in the console. */
async function loadCalls() {
  const { calls } = await api.request("GET", `/admin/usage/calls?limit=${RECENT_CALLS}`);
  el.callsBody.replaceChildren(
    ...calls.map((call) => {
      const turn =
        call.sessionId && call.turnId
          ? h("a", {
              href: `/?session=${encodeURIComponent(call.sessionId)}&turn=${encodeURIComponent(call.turnId)}`,
              class: "turn-link",
              "data-turn-id": call.turnId,
              text: `${call.endpoint} turn`,
              title: `The timeline of turn ${call.turnId}`,
            })
          : call.endpoint;
      return h(
        "tr",
        {},
        h("td", {}, h("time", { dateTime: call.createdAt, text: call.createdAt.replace("T", " ").slice(0, 19) })),
        h("td", { text: call.userId }),
        h("td", {}, turn),
        h("td", { text: call.route }),
        h("td", { text: call.model }),
        h("td", {
          text: `${number(call.promptTokens)} in${call.cachedInputTokens ? ` (${number(call.cachedInputTokens)} from cache)` : ""}, ${number(call.completionTokens)} out`,
        }),
        h("td", { text: `${number(call.latencyMs)} ms` }),
        h("td", { text: call.outcome }),
      );
    }),
  );
  if (calls.length === 0)
    el.callsBody.replaceChildren(h("tr", {}, h("td", { colspan: 8, text: "No model calls yet." })));
}

async function downloadCsv() {
  const days = lastDays();
  const response = await fetch(
    `/admin/usage?groupBy=day&by=${el.usageBy.value}&from=${days[0]}&to=${days.at(-1)}&format=csv`,
    {
      headers: { authorization: `Bearer ${api.apiKey}` },
    },
  );
  if (!response.ok) {
    say(`The CSV could not be made (status ${response.status}).`, true);
    return;
  }
  const link = h("a", { href: URL.createObjectURL(await response.blob()), download: `usage-${days.at(-1)}.csv` });
  link.click();
  // Revoked once the browser has started the download.
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

/** Whose an entry is: the deployment's (every org's), or the org's own. */
const whose = (/** @type {string | null} */ org) => (org === null ? "deployment" : "your organization");

async function loadRoutes() {
  const { routes } = await api.request("GET", "/admin/model-routes");
  el.routesBody.replaceChildren(
    ...routes.map((route) =>
      h(
        "tr",
        {},
        h("td", { class: "long", text: route.name }),
        h("td", { text: whose(route.org) }),
        h("td", { text: route.provider }),
        h("td", { class: "long", text: route.model }),
        h("td", { class: "long", text: route.apiKeySecret ?? "—" }),
        h("td", { class: "long", text: route.fallbacks.join(", ") || "—" }),
        h("td", {
          text:
            route.inputPricePerMTok === null && route.outputPricePerMTok === null
              ? "—"
              : // Cached input and cache writes cost the input price unless the route names their own.
                `${route.inputPricePerMTok ?? 0} / ${route.cachedInputPricePerMTok ?? route.inputPricePerMTok ?? 0} / ${route.cacheWritePricePerMTok ?? route.inputPricePerMTok ?? 0} / ${route.outputPricePerMTok ?? 0}`,
        }),
        h("td", { text: promptCacheOf(route) }),
      ),
    ),
  );
  labelCells(el.routesBody);
}

/**
 * How a route uses the provider's prompt cache, in a few words.
 * @param {{ provider: string, promptCaching: boolean, promptCacheTtl: string | null, promptCacheKey: boolean }} route
 */
function promptCacheOf(route) {
  if (route.provider === "anthropic")
    return route.promptCaching ? `breakpoints, ${route.promptCacheTtl ?? "5m"}` : "off";
  if (route.provider === "openai_compatible") return route.promptCacheKey ? "automatic, prompt_cache_key" : "automatic";
  return "—";
}

/** Audit rows the page shows: the newest. */
const RECENT_CHANGES = 20;

/** The newest changes of the audit log: when, who (and their role), whose configuration, what, to what. */
async function loadAudit() {
  const { entries } = await api.request("GET", `/admin/audit?limit=${RECENT_CHANGES}`);
  el.auditBody.replaceChildren(
    ...entries.map((entry) =>
      h(
        "tr",
        {},
        h("td", {}, h("time", { dateTime: entry.at, text: entry.at.replace("T", " ").slice(0, 19) })),
        h("td", { text: `${entry.actor.user} (${entry.actor.role})` }),
        h("td", { text: entry.org === null ? "deployment" : entry.org }),
        h("td", { text: entry.action }),
        h("td", { text: entry.target }),
      ),
    ),
  );
  if (entries.length === 0) el.auditBody.replaceChildren(h("tr", {}, h("td", { colspan: 5, text: "No changes yet." })));
}

/** Each route's live check: its result, and each check's name and what was found (the upstream's words on a failure). */
async function loadHealth() {
  el.healthCheck.disabled = true;
  el.healthBody.setAttribute("aria-busy", "true");
  el.healthBody.replaceChildren(h("tr", {}, h("td", { colspan: 5, text: "Checking…" })));
  try {
    const { routes } = await api.request("GET", "/admin/health");
    el.healthBody.replaceChildren(
      ...routes.map((route) =>
        h(
          "tr",
          {},
          h("td", { text: route.route }),
          h("td", { text: route.provider }),
          h("td", { text: route.model }),
          h("td", { class: route.ok ? "" : "error", text: route.ok ? "ok" : "fails" }),
          h(
            "td",
            {},
            h(
              "ul",
              { class: "health-checks" },
              ...route.checks.map((check) =>
                h("li", {
                  class: check.ok ? "" : "error",
                  text: `${check.ok ? "✓" : "✗"} ${check.name}: ${check.message}${check.status === null ? "" : ` (${check.status})`}`,
                }),
              ),
            ),
          ),
        ),
      ),
    );
    labelCells(el.healthBody);
  } catch (error) {
    el.healthBody.replaceChildren(h("tr", {}, h("td", { colspan: 5, class: "error", text: String(error) })));
  } finally {
    el.healthBody.removeAttribute("aria-busy");
    el.healthCheck.disabled = false;
  }
}

async function start() {
  const key = sessionStorage.getItem(KEY_STORAGE);
  const client = key ? new ApiClient({ apiKey: key }) : await ApiClient.ofBrowserSession().catch(() => null);
  if (!client) {
    say("Sign in on the chat page first, as an admin (single sign-on) or with a key that has the admin scope.", true);
    return;
  }
  api = client;
  try {
    await loadKeys();
  } catch (error) {
    const refused = error instanceof ApiError && (error.status === 403 || error.status === 401);
    say(refused ? "This page needs a key with the admin scope." : String(error), true);
    return;
  }
  // Busy until the page's first figures are in (assistive technology waits for them; so do the browser tests).
  el.admin.setAttribute("aria-busy", "true");
  el.admin.hidden = false;
  el.newKeyForm.addEventListener("submit", createKey);
  el.budgetForm.addEventListener("submit", saveBudget);
  el.copyKey.addEventListener("click", () => void navigator.clipboard?.writeText(el.newKeyValue.textContent ?? ""));
  el.usageBy.addEventListener("change", () => void loadUsage());
  el.usageCsv.addEventListener("click", () => void downloadCsv());
  el.healthCheck.addEventListener("click", () => void loadHealth());
  // The live checks wait on upstreams (seconds, for one that does not answer): not among the figures the page waits for.
  void loadHealth();
  try {
    await Promise.all([
      loadUsers(),
      loadBudget(),
      loadUsage(),
      loadCalls(),
      loadRoutes(),
      startModesEditor(api, labelCells),
      loadAudit(),
      loadWebhooks(api, labelCells),
      loadEvalRuns(api, labelCells),
      loadMemorySwitch(api),
      loadGuardrails(api),
    ]);
  } finally {
    el.admin.removeAttribute("aria-busy");
  }
}

void start();

// @ts-check
// Schedules in the console: the person's schedules (name, next run, last run with a link to its conversation, its
// runs, enable or disable, run now, delete), and "Run this every…" from a conversation, which makes a schedule that
// continues that conversation with its last message as the prompt (an interval, a cron expression or one time, in the
// browser's time zone unless another is typed). docs/schedules.md.
import { ApiError } from "./api.js";
import { openSession } from "./connection.js";
import { byId, h } from "./dom.js";
import { describe } from "./status.js";
import { state } from "./store.js";

const listDialog = byId("schedules-dialog", HTMLDialogElement);
const list = byId("schedules-list");
const listStatus = byId("schedules-status");
const formDialog = byId("schedule-dialog", HTMLDialogElement);
const form = byId("schedule-form", HTMLFormElement);
const nameInput = byId("schedule-name", HTMLInputElement);
const promptInput = byId("schedule-prompt", HTMLTextAreaElement);
const whenInput = byId("schedule-when", HTMLInputElement);
const whenLabel = byId("schedule-when-label");
const whenHint = byId("schedule-when-hint");
const zoneInput = byId("schedule-timezone", HTMLInputElement);
const formError = byId("schedule-error");
const about = byId("schedule-about");

/** A time as the person reads it, in their browser's zone. @param {string | null} iso */
function when(iso) {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "none";
}

/** How often it runs, in a few words. @param {any} schedule */
function cadence(schedule) {
  if (schedule.every) return `every ${schedule.every}`;
  if (schedule.cron) return `cron ${schedule.cron} (${schedule.timezone})`;
  return `once, ${when(schedule.at)}`;
}

/** @param {any} schedule */
function lastRunOf(schedule) {
  const run = schedule.lastRun;
  if (!run) return h("span", { text: "Last run: none yet" });
  const text = `Last run: ${run.status}, ${when(run.at)}${run.reason ? ` (${run.reason})` : ""}`;
  if (!run.sessionId) return h("span", { text });
  return h(
    "span",
    {},
    `${text} `,
    h("button", {
      type: "button",
      class: "link",
      text: "Open its conversation",
      "aria-label": `Open its conversation (the last run of ${schedule.name})`,
      onclick: async () => {
        listDialog.close();
        await openSession(run.sessionId);
      },
    }),
  );
}

/** A run in the list of runs: when, how it went, and its conversation. @param {any} run */
function runItem(run) {
  const text = `${when(run.at)}: ${run.status}${run.reason ? ` (${run.reason})` : ""}`;
  if (!run.sessionId) return h("li", { text });
  return h(
    "li",
    {},
    `${text} `,
    h("button", {
      type: "button",
      class: "link",
      text: "Open",
      "aria-label": `Open the conversation of the run of ${when(run.at)}`,
      onclick: async () => {
        listDialog.close();
        await openSession(run.sessionId);
      },
    }),
  );
}

/** The schedule's runs, newest first, read when the person opens them. @param {any} schedule @param {string} path */
function runsOf(schedule, path) {
  const items = h("ul", { class: "schedule-runs" });
  const details = h("details", {}, h("summary", { text: "Runs" }), items);
  details.addEventListener("toggle", async () => {
    if (!(/** @type {HTMLDetailsElement} */ (details).open)) return;
    items.replaceChildren(h("li", { text: "Loading…" }));
    try {
      const { runs } = await state.api.request("GET", `${path}/runs?limit=20`);
      items.replaceChildren(...runs.map(runItem));
      if (runs.length === 0) items.replaceChildren(h("li", { text: `${schedule.name} has not run yet.` }));
    } catch (error) {
      items.replaceChildren(h("li", { text: describe(error) }));
    }
  });
  return details;
}

/** @param {any} schedule */
function scheduleItem(schedule) {
  const act = async (/** @type {() => Promise<unknown>} */ action, /** @type {string} */ done) => {
    try {
      await action();
      await showSchedules();
      listStatus.textContent = done;
    } catch (error) {
      listStatus.textContent = describe(error);
    }
  };
  const path = `/context/schedules/${encodeURIComponent(schedule.scheduleId)}`;
  const toggleId = `schedule-enabled-${schedule.scheduleId}`;
  return h(
    "li",
    { "data-schedule-id": schedule.scheduleId },
    h("strong", { class: "schedule-name", text: schedule.name }),
    h("span", { class: "schedule-cadence", text: ` ${cadence(schedule)}` }),
    h("span", {
      class: "schedule-next",
      text: `Next run: ${schedule.enabled ? when(schedule.nextRunAt) : "disabled"}`,
    }),
    lastRunOf(schedule),
    runsOf(schedule, path),
    h(
      "span",
      { class: "schedule-actions" },
      h(
        "label",
        { class: "inline", for: toggleId },
        h("input", {
          id: toggleId,
          type: "checkbox",
          checked: schedule.enabled,
          onchange: (/** @type {Event} */ event) => {
            const enabled = /** @type {HTMLInputElement} */ (event.target).checked;
            void act(
              () => state.api.request("PATCH", path, { enabled }),
              `${schedule.name} is ${enabled ? "enabled" : "disabled"}.`,
            );
          },
        }),
        " Enabled",
      ),
      h("button", {
        type: "button",
        text: "Run now",
        "aria-label": `Run now: ${schedule.name}`,
        onclick: () => act(() => state.api.request("POST", `${path}/run`), `${schedule.name} started.`),
      }),
      h("button", {
        type: "button",
        class: "danger",
        text: "Delete",
        "aria-label": `Delete: ${schedule.name}`,
        onclick: () => act(() => state.api.request("DELETE", path), `${schedule.name} is deleted.`),
      }),
    ),
  );
}

/** Draws the person's schedules. */
export async function showSchedules() {
  listStatus.textContent = "";
  try {
    const { schedules } = await state.api.request("GET", "/context/schedules");
    list.replaceChildren(...schedules.map(scheduleItem));
    if (schedules.length === 0) list.replaceChildren(h("li", { text: "No schedule yet." }));
  } catch (error) {
    listStatus.textContent = describe(error);
  }
}

byId("open-schedules").addEventListener("click", () => {
  listDialog.showModal();
  void showSchedules();
});
byId("close-schedules").addEventListener("click", () => listDialog.close());

// --- "Run this every…" --------------------------------------------------------------------------------

const KINDS = {
  every: { label: "Interval (15m, 1h, 1d)", hint: "At least a minute: 15m, 1h, 1h30m, 1d, or PT15M.", type: "text" },
  cron: {
    label: "Cron expression",
    hint: "Five fields: minute hour day-of-month month day-of-week (0 9 * * 1).",
    type: "text",
  },
  at: { label: "Date and time", hint: "Once, at this time in the time zone below.", type: "datetime-local" },
};

/** The kind chosen in the dialog. @returns {"every" | "cron" | "at"} */
function kind() {
  const chosen = /** @type {HTMLInputElement | null} */ (form.querySelector('input[name="kind"]:checked'));
  return chosen?.value === "cron" || chosen?.value === "at" ? chosen.value : "every";
}

function showKind() {
  const shown = KINDS[kind()];
  whenLabel.textContent = shown.label;
  whenHint.textContent = shown.hint;
  whenInput.type = shown.type;
  whenInput.value = "";
}
for (const radio of form.querySelectorAll('input[name="kind"]')) radio.addEventListener("change", showKind);

/** The offset of `zone` at a wall-clock time, as ±HH:MM (the zone typed, or the browser's). @param {string} local @param {string} zone */
function atInZone(local, zone) {
  // The wall-clock time read as UTC, and what that instant shows in the zone: their difference is the zone's offset.
  const asUtc = Date.parse(`${local}:00Z`);
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(asUtc));
  const get = (/** @type {string} */ type) => Number(parts.find((p) => p.type === type)?.value);
  const shown = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return new Date(asUtc - (shown - asUtc)).toISOString();
}

/** The last thing the person said in a session: the prompt's first guess. @param {string} sessionId */
async function lastPrompt(sessionId) {
  const page = await state.api.request("GET", `/context/sessions/${encodeURIComponent(sessionId)}/messages?limit=50`);
  const mine = page.messages.find((/** @type {any} */ m) => m.role === "user" && m.content);
  return mine?.content ?? "";
}

byId("schedule-session").addEventListener("click", async () => {
  const manage = byId("manage-dialog", HTMLDialogElement);
  const sessionId = manage.dataset.sessionId ?? "";
  const title = manage.dataset.title || "Scheduled conversation";
  manage.close();
  form.dataset.sessionId = sessionId;
  about.textContent = `Each run continues “${title}” as a new message from you.`;
  nameInput.value = title.slice(0, 80);
  promptInput.value = "";
  formError.textContent = "";
  zoneInput.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  showKind();
  formDialog.showModal();
  promptInput.value = await lastPrompt(sessionId).catch(() => "");
});
byId("schedule-cancel").addEventListener("click", () => formDialog.close());

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  formError.textContent = "";
  const chosen = kind();
  const timezone = zoneInput.value.trim();
  const value = whenInput.value.trim();
  /** @type {Record<string, string>} */
  const body = { name: nameInput.value, prompt: promptInput.value, timezone, sessionId: form.dataset.sessionId ?? "" };
  try {
    body[chosen] = chosen === "at" && value ? atInZone(value, timezone) : value;
  } catch {
    // An unknown zone: the server names it.
    body[chosen] = value;
  }
  try {
    const schedule = await state.api.request("POST", "/context/schedules", body);
    formDialog.close();
    listDialog.showModal();
    await showSchedules();
    listStatus.textContent = `${schedule.name} will run next ${when(schedule.nextRunAt)}.`;
  } catch (error) {
    formError.textContent = describe(error);
    if (error instanceof ApiError && error.param) {
      const field = { name: nameInput, prompt: promptInput, timezone: zoneInput }[error.param] ?? whenInput;
      field.setAttribute("aria-invalid", "true");
      field.focus();
    }
  }
});
form.addEventListener("input", (event) => {
  if (event.target instanceof HTMLElement) event.target.removeAttribute("aria-invalid");
});

// @ts-check
// A turn's waterfall: one row per step of GET .../turns/:turnId/timeline, a bar on the turn's time axis (left at
// the step's offset, as wide as its duration), a colour and a label per kind, the figures in a tooltip that shows
// on hover and on keyboard focus. Loaded when a person first opens a timeline, never with the page.
import { h } from "./dom.js";

/**
 * @typedef {{kind: string, name: string, offsetMs: number, durationMs: number, route?: string, provider?: string,
 *   model?: string, ttftMs?: number | null, inputTokens?: number, outputTokens?: number, cachedInputTokens?: number,
 *   cacheWriteInputTokens?: number, finishReason?: string | null,
 *   toolCallId?: string, ranOn?: string, mcpServer?: string, outcome?: string, iterations?: number, error?: string,
 *   traceId?: string}} TimelineStep
 * @typedef {{sessionId: string, turnId: string, status: string, startedAt: string, endedAt: string | null,
 *   durationMs: number, traceIds: string[], steps: TimelineStep[]}} TurnTimeline
 */

/** What each kind is called on screen (the legend, the row labels, the bars' names for screen readers). */
export const KIND_LABELS = {
  run: "Run",
  model_call: "Model call",
  tool_call: "Tool call",
  wait: "Wait",
  failover: "Failover",
  restart: "Restart",
};

const RAN_ON = { server: "on the server", client: "in the client", mcp: "on an MCP server" };
const WAITED_FOR = { approval: "a person's approval", client: "the client's results", elicitation: "an answer" };

/** @param {number} ms */
export function formatMs(ms) {
  return ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** @param {string} kind */
const kindLabel = (kind) => KIND_LABELS[kind] ?? kind;

/** @param {TimelineStep} step */
function tokensOf(step) {
  if (step.inputTokens === undefined && step.outputTokens === undefined) return null;
  // The prompt cache's share of the input, when the provider read any of it from there.
  const cached = step.cachedInputTokens ? ` (${step.cachedInputTokens} from cache)` : "";
  return `${step.inputTokens ?? 0} in${cached}, ${step.outputTokens ?? 0} out`;
}

/** The figures of a step, one line each, as the tooltip shows them. @param {TimelineStep} step */
export function stepDetails(step) {
  const lines = [`${kindLabel(step.kind)}: ${step.name}`];
  const instant = step.kind === "failover" || step.kind === "restart";
  lines.push(
    instant ? `At +${formatMs(step.offsetMs)}` : `${formatMs(step.durationMs)}, from +${formatMs(step.offsetMs)}`,
  );
  if (step.route) lines.push(`Route ${step.route}${step.provider ? ` (${step.provider}, ${step.model ?? ""})` : ""}`);
  if (typeof step.ttftMs === "number") lines.push(`First token after ${formatMs(step.ttftMs)}`);
  const tokens = tokensOf(step);
  if (tokens) lines.push(`Tokens: ${tokens}`);
  if (step.finishReason) lines.push(`Finished: ${step.finishReason}`);
  if (step.ranOn) lines.push(`Ran ${RAN_ON[step.ranOn] ?? step.ranOn}${step.mcpServer ? ` (${step.mcpServer})` : ""}`);
  if (step.kind === "wait") lines.push(`Waited for ${WAITED_FOR[step.name] ?? step.name}`);
  if (step.outcome) lines.push(`Ended: ${step.outcome}${step.iterations ? `, ${step.iterations} model calls` : ""}`);
  if (step.error) lines.push(`Error: ${step.error}`);
  return lines;
}

/** What a screen reader says for a bar: kind, name, duration, tokens. @param {TimelineStep} step */
function barLabel(step) {
  const tokens = tokensOf(step);
  return `${kindLabel(step.kind)} ${step.name}, ${formatMs(step.durationMs)}${tokens ? `, tokens ${tokens}` : ""}`;
}

/**
 * Draws `timeline` into `root` (replacing what it held): the summary, the trace ids, the legend, the axis and a row
 * per step. `tip` is the one tooltip element the bars share.
 * @param {HTMLElement} root @param {HTMLElement} tip @param {TurnTimeline} timeline
 */
export function drawTimeline(root, tip, timeline) {
  // The axis spans the turn; a step drawn past it (an open turn's, a moment after `durationMs` was taken) widens it.
  const total = Math.max(1, timeline.durationMs, ...timeline.steps.map((s) => s.offsetMs + s.durationMs));
  const pct = (ms) => `${((ms / total) * 100).toFixed(3)}%`;
  const summary = h("p", {
    class: "timeline-summary",
    text: `${timeline.steps.length} step${timeline.steps.length === 1 ? "" : "s"} in ${formatMs(timeline.durationMs)}, ${timeline.status.replace(/_/g, " ")}${timeline.endedAt ? "" : " (still open)"}.`,
  });
  const traces = h(
    "p",
    { class: "timeline-traces", "data-trace-ids": timeline.traceIds.join(" ") },
    timeline.traceIds.length === 0
      ? "No trace ids: tracing was off for this turn."
      : `Trace id${timeline.traceIds.length === 1 ? "" : "s"}: `,
    ...timeline.traceIds.flatMap((id, i) => [i > 0 ? ", " : "", h("code", { text: id })]),
  );
  const kinds = [...new Set(timeline.steps.map((s) => s.kind))];
  const legend = h(
    "ul",
    { class: "timeline-legend", "aria-label": "Kinds of steps" },
    ...kinds.map((kind) =>
      h("li", {}, h("span", { class: `timeline-swatch kind-${kind}`, "aria-hidden": "true" }), kindLabel(kind)),
    ),
  );
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    h("span", { class: "timeline-tick", style: `left: ${f * 100}%`, text: formatMs(f * total) }),
  );
  const axis = h(
    "div",
    { class: "timeline-row timeline-axis", "aria-hidden": "true" },
    h("span", { class: "timeline-label" }),
    h("div", { class: "timeline-track" }, ...ticks),
  );
  const rows = timeline.steps.map((step, index) => {
    const bar = h("span", {
      class: `timeline-bar kind-${step.kind}`,
      tabindex: "0",
      role: "img",
      "aria-label": barLabel(step),
      "aria-describedby": tip.id,
      "data-step": String(index),
      "data-kind": step.kind,
      "data-offset-ms": String(step.offsetMs),
      "data-duration-ms": String(step.durationMs),
      style: `left: ${pct(step.offsetMs)}; width: ${pct(step.durationMs)}`,
    });
    const show = () => showTip(tip, bar, stepDetails(step));
    bar.addEventListener("mouseenter", show);
    bar.addEventListener("focus", show);
    bar.addEventListener("mouseleave", () => hideTip(tip, bar));
    bar.addEventListener("blur", () => hideTip(tip, bar));
    return h(
      "li",
      { class: `timeline-row kind-${step.kind}` },
      h(
        "span",
        { class: "timeline-label", title: step.name },
        h("strong", { text: kindLabel(step.kind) }),
        ` ${step.name}`,
      ),
      h("div", { class: "timeline-track" }, bar),
    );
  });
  const list =
    rows.length > 0
      ? h("ol", { class: "timeline-steps", "aria-label": "Steps of the turn" }, ...rows)
      : h("p", {
          class: "mode-description",
          text: "No steps were recorded for this turn: it ran before the timeline was kept.",
        });
  hideTip(tip, null);
  root.replaceChildren(summary, traces, legend, axis, list);
}

/** @param {HTMLElement} tip @param {HTMLElement} bar @param {string[]} lines */
function showTip(tip, bar, lines) {
  tip.replaceChildren(...lines.map((line) => h("span", { text: line })));
  tip.hidden = false;
  tip.dataset.step = bar.dataset.step ?? "";
  // Below the bar, kept inside the dialog's width (the tooltip is positioned in the dialog's box).
  const parent = tip.offsetParent;
  const box = parent?.getBoundingClientRect() ?? { left: 0, top: 0, width: window.innerWidth };
  const at = bar.getBoundingClientRect();
  const left = Math.min(Math.max(0, at.left - box.left), Math.max(0, box.width - tip.offsetWidth - 8));
  tip.style.left = `${left}px`;
  tip.style.top = `${at.bottom - box.top + (parent?.scrollTop ?? 0) + 6}px`;
}

/** Hides the tooltip if it is `bar`'s (null: whoever's it is). @param {HTMLElement} tip @param {HTMLElement | null} bar */
function hideTip(tip, bar) {
  if (bar && tip.dataset.step !== bar.dataset.step) return;
  tip.hidden = true;
  tip.dataset.step = "";
}

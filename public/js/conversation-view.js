// @ts-check
// The conversation as the page draws it: the session's mode, its messages (with branches' tools and the summary's
// marker), the answer streaming in, and the working indicator with the turn's tool calls.
import { removeClientRequest, showApprovals, showClientRequests } from "./approvals.js";
import { Branches } from "./branches.js";
import { sendMessage } from "./composer.js";
import { openSession } from "./connection.js";
import { openArtifact, openTimeline, showElicitation } from "./dialogs.js";
import { byId, h } from "./dom.js";
import { el } from "./elements.js";
import { followConversation } from "./follow.js";
import { drawSessions, refreshSessionsSoon } from "./list.js";
import { renderMarkdown } from "./markdown.js";
import { MEMORY_SAVE, memoryMarkItem, savedMemory } from "./memory-marks.js";
import { describe, say } from "./status.js";
import { forgetDecisions, state } from "./store.js";
import { artifactItem, loadEarlierItem, messageItem, summaryItem, toolCallItem } from "./views.js";

// The view follows the conversation while the reader is at its end (js/follow.js).
export const follow = followConversation(
  [el.conversation, el.streaming],
  byId("jump-latest", HTMLButtonElement),
  () => (el.streaming.hidden ? el.conversation.lastElementChild : el.streaming),
  el.statusLine,
  el.composer,
  byId("chat-scroll"),
);

/** After a branch: a button beside the message that opens the new session (this one stays as it is). */
export function offerSession(sessionId) {
  el.statusLine.append(
    " ",
    h("button", {
      type: "button",
      class: "quiet",
      "data-open-session": sessionId,
      text: "Open the new session",
      onclick: async () => {
        try {
          await openSession(sessionId);
          say("You are in the new session; the one you left keeps its conversation.");
          el.composerInput.focus();
        } catch (error) {
          say(describe(error), true);
        }
      },
    }),
  );
}

export function showMode(key) {
  // The picker follows the session's mode when it changes, not on every redraw (the user may be choosing).
  if (key !== state.mode) el.modePicker.value = key;
  state.mode = key;
  const mode = state.modes.find((m) => m.key === key);
  el.currentMode.textContent = mode ? mode.displayName : key;
  el.currentMode.title = mode?.description ?? "";
  el.currentMode.dataset.mode = key;
  el.modeDescription.textContent = mode?.description ?? "";
}

export function renderSession(view) {
  showMode(view.mode);
  state.status = view.status;
  const held = state.conversation;
  if (held.sessionId !== view.sessionId) {
    forgetDecisions();
    follow.opened();
    state.conversation = {
      sessionId: view.sessionId,
      messages: new Map(),
      hasEarlier: view.hasMoreMessages,
      summary: null,
    };
  }
  for (const message of view.conversation) state.conversation.messages.set(message.seq, message);
  state.conversation.summary = view.summary ?? null;
  drawConversation();
  el.artifacts.replaceChildren(...view.artifacts.map((artifact) => artifactItem(artifact, openArtifact)));
  const pending = view.pendingToolCalls ?? [];
  showApprovals(pending.filter((call) => call.approval === "pending"));
  const forClient = pending.filter((call) => call.requiresClientExecution && call.approval !== "pending");
  for (const id of [...state.clientCalls.keys()]) {
    if (!forClient.some((call) => call.id === id)) removeClientRequest(id);
  }
  showClientRequests(forClient);
  showElicitation(view.pendingElicitation ?? null);
  if (view.status === "idle") hideWorking();
  else showWorking(view.status === "running" ? "running" : "waiting");
  el.app.dataset.status = view.status;
  state.lastEndedTurnId = view.turns.at(-1)?.turnId ?? null;
}

/** The messages the page has, oldest first, with the summary's marker where the summarised part ends. */
export function drawConversation() {
  const { messages, hasEarlier, summary } = state.conversation;
  const items = [];
  if (hasEarlier) items.push(loadEarlierItem(() => void loadEarlier()));
  let marked = summary === null;
  const sorted = [...messages.values()].sort((a, b) => a.seq - b.seq);
  // The last thing the agent said in each turn offers the turn's timeline (one button a turn, under its answer).
  const lastOfTurn = new Map();
  for (const message of sorted)
    if (message.role === "assistant" && (message.content || message.toolCalls?.length))
      lastOfTurn.set(message.turnId, message.seq);
  const onTimeline = (turnId) => (button) => void openTimeline(turnId, button);
  const regenerate = lastAnswerAsked(sorted);
  const { sessionId } = state.conversation;
  const wholeSummary = async () => (await state.api.getSummary(sessionId)).summary?.text ?? "";
  // Each call's name by its id: a `memory_save` call's result is followed by its mark.
  const callNames = new Map(sorted.flatMap((m) => (m.toolCalls ?? []).map((call) => [call.id, call.name])));
  const found = state.foundMessage?.sessionId === sessionId ? state.foundMessage.seq : null;
  for (const message of sorted) {
    if (!marked && summary && message.seq > summary.toSeq) {
      items.push(summaryItem(summary, wholeSummary));
      marked = true;
    }
    const last = lastOfTurn.get(message.turnId) === message.seq;
    const item = messageItem(message, {
      ...(last ? { onTimeline: onTimeline(message.turnId) } : {}),
      ...(message.truncated
        ? { loadWhole: async () => (await state.api.getMessage(sessionId, message.seq)).messages[0]?.content ?? "" }
        : {}),
    });
    if (!item) continue;
    item.dataset.seq = String(message.seq);
    if (message.seq === found) item.classList.add("found");
    branches.decorate(item, message, {
      sessionId,
      ...(regenerate?.answer === message ? { regenerate: regenerate.asked } : {}),
    });
    items.push(item);
    const saved =
      message.role === "tool" && callNames.get(message.toolCallId) === MEMORY_SAVE && savedMemory(message.content);
    if (saved) items.push(memoryMarkItem(message.toolCallId, saved));
  }
  if (!marked && summary) items.push(summaryItem(summary, wholeSummary));
  el.conversation.replaceChildren(...items);
}

/**
 * When the session is idle and ends with an answer: that answer and the person's message it answers (Regenerate).
 * @param {any[]} sorted the conversation, oldest first
 */
function lastAnswerAsked(sorted) {
  const answer = sorted.at(-1);
  if (state.status !== "idle" || answer?.role !== "assistant") return null;
  if (answer.kind !== "answer" && answer.kind !== "stopped") return null;
  const asked = sorted.findLast((m) => m.role === "user" && m.kind === "message");
  return asked ? { answer, asked } : null;
}

/** A conversation's branches: Copy, Edit, Regenerate and the switcher between branches (js/branches.js). */
export const branches = new Branches({
  api: () => {
    if (!state.api) throw new Error("Not signed in.");
    return state.api;
  },
  open: async (sessionId) => {
    await openSession(sessionId);
    drawSessions();
    refreshSessionsSoon();
    el.composerInput.focus();
  },
  send: (content) => sendMessage(content),
  say,
  redraw: () => drawConversation(),
});

/** The page of messages before the oldest one the page has, drawn above it. */
async function loadEarlier() {
  const held = state.conversation;
  const oldest = Math.min(...held.messages.keys());
  try {
    const page = await state.api.getMessages(held.sessionId, oldest);
    if (state.conversation !== held) return;
    for (const message of page.messages) held.messages.set(message.seq, message);
    held.hasEarlier = page.hasMore;
    drawConversation();
  } catch (error) {
    say(`Could not load earlier messages: ${describe(error)}`, true);
  }
}

/**
 * Once per turn, after the session is redrawn: says how a turn that did not complete ended, and counts it in
 * `data-completed-turns` (the browser tests wait on it), whichever way the page heard of its end.
 * @param {string | null} turnId @param {{status: string, error?: {message: string}}} response
 */
export function turnEnded(turnId, response) {
  if (!turnId || state.endedTurns.has(turnId)) return;
  state.endedTurns.add(turnId);
  if (response.status === "failed") say(`The turn failed: ${response.error?.message ?? "unknown error"}`, true);
  else if (response.status === "cancelled") say("The turn was cancelled.");
  el.app.dataset.completedTurns = String(Number(el.app.dataset.completedTurns ?? 0) + 1);
}

/** @param {"running" | "waiting"} phase waiting: the turn is paused for approvals or a client's results */
export function showWorking(phase = "running") {
  state.turnInFlight = true;
  el.turnBar.hidden = false;
  el.workingLabel.textContent = phase === "running" ? "Working…" : "Waiting for you…";
  el.app.dataset.turn = phase;
}

/** Says the finished answer once to screen readers (the conversation itself is redrawn, not announced). */
export function announce(text) {
  el.announcer.textContent = text ? `The agent answered: ${text.slice(0, 500)}` : "The turn ended.";
}

export function hideWorking() {
  state.turnInFlight = false;
  el.turnBar.hidden = true;
  setStream("", 0);
  el.app.dataset.turn = "idle";
}

/**
 * The answer streaming in, drawn as Markdown at most once a frame (no diagrams or highlighting until it is
 * done: the finished answer is drawn in the conversation). `coveredSeq`: deltas up to it are in `text` already.
 * @param {string} text
 * @param {number} [coveredSeq]
 */
export function setStream(text, coveredSeq = state.stream.coveredSeq) {
  state.stream.text = text;
  state.stream.coveredSeq = coveredSeq;
  if (text === "") {
    el.streaming.hidden = true;
    el.streaming.textContent = "";
    return;
  }
  if (state.stream.drawPending) return;
  state.stream.drawPending = true;
  requestAnimationFrame(() => {
    state.stream.drawPending = false;
    // Shown once drawn, never as an empty box; a stream emptied meanwhile stays hidden.
    if (state.stream.text === "") return;
    renderMarkdown(el.streaming, state.stream.text, { live: true });
    el.streaming.hidden = false;
  });
}

/** The model call that asked for tools is over: its text joins the conversation, where a reload finds it too. */
export function settleStream() {
  el.conversation.append(messageItem({ role: "assistant", kind: "message", content: state.stream.text }));
  setStream("");
}

export function upsertToolCall(call) {
  state.turnCalls.set(call.id, call);
  const item = toolCallItem(call);
  const existing = el.toolCalls.querySelector(`[data-tool-call-id="${CSS.escape(call.id)}"]`);
  if (existing) existing.replaceWith(item);
  else el.toolCalls.append(item);
  el.workingCount.textContent = `(${state.turnCalls.size} tool call${state.turnCalls.size === 1 ? "" : "s"})`;
}

/** A new turn: its tool call list starts empty. */
export function clearToolCalls() {
  state.turnCalls.clear();
  el.toolCalls.replaceChildren();
  el.workingCount.textContent = "";
}

/** How long a message a search opened stays highlighted. */
const FOUND_MS = 4_000;

/**
 * Shows message `seq` of the open conversation (earlier pages are loaded until it is drawn), scrolled into view and
 * highlighted for a moment; the view stops following the end meanwhile. Whether it was found.
 * @param {number} seq
 */
export async function revealMessage(seq) {
  const held = state.conversation;
  while (!held.messages.has(seq) && held.hasEarlier && state.conversation === held) {
    const before = held.messages.size;
    await loadEarlier();
    if (held.messages.size === before) break;
  }
  if (state.conversation !== held) return false;
  state.foundMessage = { sessionId: held.sessionId, seq };
  drawConversation();
  const item = el.conversation.querySelector(`[data-seq="${seq}"]`);
  if (!(item instanceof HTMLElement)) return false;
  follow.hold(() => el.conversation.querySelector(`[data-seq="${seq}"]`));
  item.scrollIntoView({ block: "center" });
  item.tabIndex = -1;
  item.focus({ preventScroll: true });
  const shown = state.foundMessage;
  window.setTimeout(() => {
    if (state.foundMessage !== shown) return;
    state.foundMessage = null;
    follow.release();
    el.conversation.querySelector(".message.found")?.classList.remove("found");
  }, FOUND_MS);
  return true;
}

// @ts-check
// What a paused turn waits for from the person: the approval dialog (decide each call, or all at once) and the
// requests for their client (a client-executed tool's call, answered with its result or refused).
import { reloadSession } from "./connection.js";
import { byId, h } from "./dom.js";
import { el } from "./elements.js";
import { describe, say } from "./status.js";
import { forgetDecisions, state } from "./store.js";
import { approvalItem, clientToolItem } from "./views.js";

/** @param {any[]} waiting the calls waiting for approval */
export function showApprovals(waiting) {
  const calls = waiting.filter((call) => !state.decidedIds.has(call.id));
  const ids = calls.map((call) => call.id).join(" ");
  if (ids === state.approvalIds) return;
  state.approvalIds = ids;
  state.pendingApprovals = calls;
  if (calls.length === 0) {
    if (el.approvalDialog.open) el.approvalDialog.close();
    el.clientTools.querySelector("[data-review-approvals]")?.remove();
    el.clientTools.hidden = el.clientTools.children.length === 0;
    return;
  }
  el.approvalCalls.replaceChildren(...calls.map(approvalItem));
  if (!el.approvalDialog.open) el.approvalDialog.showModal();
}

function setAllDecisions(value) {
  for (const input of el.approvalCalls.querySelectorAll(`input[type="radio"][value="${value}"]`)) {
    /** @type {HTMLInputElement} */ (input).checked = true;
  }
}

byId("approve-all").addEventListener("click", () => setAllDecisions("approve"));
byId("deny-all").addEventListener("click", () => setAllDecisions("deny"));

el.approvalForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const choices = state.pendingApprovals.map((call) => ({
    call,
    choice: /** @type {HTMLInputElement | null} */ (
      el.approvalCalls.querySelector(`input[name="decision-${CSS.escape(call.id)}"]:checked`)
    ),
    reason: /** @type {HTMLInputElement | null} */ (
      el.approvalCalls.querySelector(`#reason-${CSS.escape(call.id)}`)
    )?.value.trim(),
  }));
  // The form asks for a choice on every call before it submits; a call still without one is never sent as approved.
  if (choices.some(({ choice }) => choice === null)) {
    el.approvalForm.reportValidity();
    return;
  }
  const decisions = choices.map(({ call, choice, reason }) => ({
    toolCallId: call.id,
    approved: choice?.value === "approve",
    ...(reason ? { reason } : {}),
  }));
  for (const decision of decisions) state.decidedIds.add(decision.toolCallId);
  el.approvalDialog.close();
  state.pendingApprovals = [];
  // If the server refuses these decisions, its error forgets them, and the next redraw opens the dialog again.
  state.approvalIds = "";
  if (state.socket?.send({ type: "approval", decisions })) return;
  try {
    await state.api.submitApprovals(state.sessionId, decisions);
  } catch (error) {
    forgetDecisions();
    say(describe(error), true);
  }
  await reloadSession();
});

el.approvalDialog.addEventListener("close", () => {
  if (state.pendingApprovals.length > 0) {
    say("Tool calls are waiting for your approval.", true);
    el.clientTools.hidden = false;
    if (!el.clientTools.querySelector("[data-review-approvals]")) {
      el.clientTools.prepend(
        h("button", {
          type: "button",
          "data-review-approvals": "",
          text: "Review the calls waiting for approval",
          onclick: (click) => {
            click.currentTarget.remove();
            if (el.clientTools.children.length === 0) el.clientTools.hidden = true;
            el.approvalDialog.showModal();
          },
        }),
      );
    }
  }
});

// --- Client-executed tools -------------------------------------------------------------------------

/** @param {any[]} calls the calls waiting for the client's results */
export function showClientRequests(calls) {
  let first = null;
  for (const call of calls) {
    if (state.clientCalls.has(call.id)) continue;
    const item = clientToolItem(call, {
      onResult: (c, resultJson) => void sendToolResult({ toolCallId: c.id, resultJson }),
      onRefuse: (c, reason) => void sendToolResult({ toolCallId: c.id, errorMessage: reason }),
    });
    state.clientCalls.set(call.id, item);
    el.clientTools.append(item);
    first ??= item;
  }
  el.clientTools.hidden = el.clientTools.children.length === 0;
  // Focus moves only to a request that just arrived, never away from what the user is typing.
  first?.querySelector("textarea")?.focus();
}

/** @param {string} id */
export function removeClientRequest(id) {
  state.clientCalls.get(id)?.remove();
  state.clientCalls.delete(id);
  el.clientTools.hidden = el.clientTools.children.length === 0;
}

async function sendToolResult(result) {
  // No result is made up: an empty box is asked to be filled (or the request refused), never sent as `{}`.
  if (result.resultJson !== undefined && result.resultJson.trim() === "") {
    say("Paste the result your client gave first, or refuse the request.", true);
    return;
  }
  try {
    JSON.parse(result.resultJson ?? "{}");
  } catch {
    say("The result is not valid JSON; fix it or refuse the request.", true);
    return;
  }
  if (state.socket?.send({ type: "tool_results", results: [result] })) return;
  try {
    await state.api.submitToolResults(state.sessionId, [result]);
    removeClientRequest(result.toolCallId);
  } catch (error) {
    say(describe(error), true);
  }
  await reloadSession();
}

// @ts-check
// The console's other dialogs: a tool's question (elicitation), the workflows, the connected apps (OAuth grants),
// an artifact, and a turn's timeline.
import { ApiError } from "./api.js";
import { reloadSession } from "./connection.js";
import { offerSession } from "./conversation-view.js";
import { byId, h } from "./dom.js";
import { el } from "./elements.js";
import { renderMarkdown } from "./markdown.js";
import { describe, say } from "./status.js";
import { state } from "./store.js";
import { downloadArtifact } from "./views.js";
import { fillSchemaForm, fillWorkflowForm, showWorkflowError, workflowList } from "./workflow-form.js";

// --- Elicitations ---------------------------------------------------------------------------------

/** Shows the server's question as a form built from its schema (the workflow form generator); null hides it. */
export function showElicitation(question) {
  if (question?.elicitationId === state.shownElicitation?.elicitationId) return;
  state.shownElicitation = question;
  if (!question) {
    if (el.elicitationDialog.open) el.elicitationDialog.close();
    return;
  }
  el.elicitationSource.textContent = `MCP server ${question.server} asks this for its tool ${question.tool}.`;
  // The dialog stays until the answer is taken (elicitation_answered, or the answer's own reply), so a refused
  // answer is shown beside its field with everything the user typed still there.
  const answer = async (body) => {
    try {
      await state.api.answerElicitation(state.sessionId, question.elicitationId, body);
      if (state.shownElicitation?.elicitationId === question.elicitationId) showElicitation(null);
    } catch (error) {
      if (error instanceof ApiError && error.status === 400 && state.shownElicitation === question) {
        showWorkflowError(el.elicitationForm, error, "content.");
        return;
      }
      say(describe(error), true);
    }
    await reloadSession();
  };
  fillSchemaForm(el.elicitationForm, {
    title: question.message,
    description: "Your answer goes to the server, and its tool call goes on.",
    schema: question.requestedSchema,
    idPrefix: `elicit-${question.elicitationId}`,
    submitLabel: "Send answer",
    actions: [
      { label: "Decline", onClick: () => void answer({ action: "decline" }) },
      { label: "Cancel", onClick: () => void answer({ action: "cancel" }) },
    ],
    onSubmit: (content) => void answer({ action: "accept", content }),
  });
  if (!el.elicitationDialog.open) el.elicitationDialog.showModal();
  /** @type {HTMLElement | null} */ (el.elicitationForm.querySelector("input, select, textarea"))?.focus();
}

// --- Workflows -------------------------------------------------------------------------------------

function showWorkflowList() {
  el.workflowForm.hidden = true;
  el.workflowList.hidden = false;
  el.workflowList.replaceChildren(...workflowList(state.categories, showWorkflowForm));
}

function showWorkflowForm(workflow) {
  el.workflowList.hidden = true;
  el.workflowForm.hidden = false;
  fillWorkflowForm(
    el.workflowForm,
    workflow,
    state.modes,
    async (parameters) => {
      try {
        const result = await state.api.runWorkflow(state.sessionId, workflow.id, parameters);
        el.workflowDialog.close();
        say(result.message);
        if (typeof result.data?.branchSessionId === "string") offerSession(result.data.branchSessionId);
        await reloadSession();
      } catch (error) {
        if (error instanceof ApiError && error.status === 400) showWorkflowError(el.workflowForm, error);
        else showWorkflowError(el.workflowForm, { message: describe(error), param: null });
      }
    },
    showWorkflowList,
  );
  /** @type {HTMLElement | null} */ (el.workflowForm.querySelector("input, select, textarea"))?.focus();
}

byId("open-workflows").addEventListener("click", () => {
  showWorkflowList();
  el.workflowDialog.showModal();
});
byId("close-workflows").addEventListener("click", () => el.workflowDialog.close());

// --- Connected apps (OAuth grants) ------------------------------------------------------------------

const grantsDialog = byId("grants-dialog", HTMLDialogElement);

async function showGrants() {
  const list = byId("grants-list");
  const status = byId("grants-status");
  status.textContent = "";
  try {
    const { grants } = await state.api.listGrants();
    list.replaceChildren(
      ...grants.map((grant) =>
        h(
          "li",
          { "data-grant-id": grant.id },
          h("strong", { text: grant.clientName }),
          ` (${grant.scopes.join(", ")}), allowed ${grant.createdAt.slice(0, 10)} `,
          h("button", {
            type: "button",
            class: "danger",
            text: "Revoke",
            "aria-label": `Revoke ${grant.clientName}`,
            onclick: async () => {
              try {
                await state.api.revokeGrant(grant.id);
                await showGrants();
                status.textContent = `${grant.clientName} can no longer act for you.`;
              } catch (error) {
                status.textContent = describe(error);
              }
            },
          }),
        ),
      ),
    );
    if (grants.length === 0) list.replaceChildren(h("li", { text: "No app is connected." }));
  } catch (error) {
    status.textContent = describe(error);
  }
}

byId("open-grants").addEventListener("click", () => {
  grantsDialog.showModal();
  void showGrants();
});
byId("close-grants").addEventListener("click", () => grantsDialog.close());

// --- Artifacts -------------------------------------------------------------------------------------

/** Opens an artifact in its dialog, drawn as Markdown. */
export function openArtifact(artifact) {
  state.shownArtifact = artifact;
  el.artifactTitle.textContent = artifact.title;
  renderMarkdown(el.artifactBody, artifact.content);
  el.artifactDialog.showModal();
}

byId("artifact-download").addEventListener("click", () => {
  if (state.shownArtifact) downloadArtifact(state.shownArtifact);
});
byId("close-artifact").addEventListener("click", () => el.artifactDialog.close());

// --- A turn's timeline ---------------------------------------------------------------------------

/**
 * Opens the waterfall of the turn `turnId` (its module is loaded the first time). @param {string} turnId
 * @param {HTMLElement | null} opener
 */
export async function openTimeline(turnId, opener) {
  state.timelineOpener = opener;
  try {
    const [{ drawTimeline }, timeline] = await Promise.all([
      import("./timeline.js"),
      state.api.turnTimeline(state.sessionId, turnId),
    ]);
    if (!el.timelineDialog.open) el.timelineDialog.showModal();
    drawTimeline(el.timelineBody, el.timelineTip, timeline);
    el.timelineDialog.dataset.turnId = turnId;
    /** @type {HTMLElement | null} */ (
      el.timelineBody.querySelector(".timeline-bar") ?? byId("close-timeline")
    ).focus();
  } catch (error) {
    say(`Could not open the turn's timeline: ${describe(error)}`, true);
  }
}

byId("close-timeline").addEventListener("click", () => el.timelineDialog.close());
// Esc closes the dialog too (its cancel); either way the focus goes back to the answer's button.
el.timelineDialog.addEventListener("close", () => {
  el.timelineTip.hidden = true;
  // A redraw meanwhile replaced the answer's button: its successor, for the same turn, takes the focus.
  const turnId = el.timelineDialog.dataset.turnId ?? "";
  const redrawn = el.conversation.querySelector(`button[data-turn-id="${CSS.escape(turnId)}"]`);
  const opener = state.timelineOpener?.isConnected
    ? state.timelineOpener
    : state.timelineOpener && redrawn instanceof HTMLElement
      ? redrawn
      : el.composerInput;
  state.timelineOpener = null;
  opener.focus();
});

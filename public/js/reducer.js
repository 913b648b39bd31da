// @ts-check
// The frames the server sends over the session's socket, handled in one place: each changes the one state object
// (js/store.js) and has the page drawn from it. A redraw from GET follows each frame that changes what waits.
import { removeClientRequest, showApprovals, showClientRequests } from "./approvals.js";
import { restoreDraft } from "./composer.js";
import { reloadSession } from "./connection.js";
import {
  announce,
  clearToolCalls,
  offerSession,
  setStream,
  settleStream,
  showMode,
  showWorking,
  turnEnded,
  upsertToolCall,
} from "./conversation-view.js";
import { showElicitation } from "./dialogs.js";
import { el } from "./elements.js";
import { refreshSessionsSoon } from "./list.js";
import { say } from "./status.js";
import { forgetDecisions } from "./store.js";

/**
 * @param {typeof import("./store.js").state} state
 * @param {any} frame
 */
export function reduce(state, frame) {
  switch (frame.type) {
    case "session_state":
      showMode(frame.mode);
      // Opened mid-turn: the answer so far, then only the deltas logged after it.
      if (typeof frame.streamedText === "string") setStream(frame.streamedText, frame.lastSeq);
      void reloadSession();
      break;
    case "turn_started":
      if (state.draft?.clientMessageId === frame.clientMessageId) state.draft = null;
      clearToolCalls();
      setStream("", frame.seq);
      say("");
      state.turnStarts++;
      showWorking();
      refreshSessionsSoon();
      break;
    case "assistant_delta":
      if (frame.seq > state.stream.coveredSeq) setStream(state.stream.text + frame.text);
      break;
    case "assistant_restarted":
    case "turn_resumed":
      // The model's stream broke mid-answer and the step starts again on another route, or a restart of the
      // session's object cut the turn off and it resumes: the cut-off call's text so far is void.
      if (frame.seq > state.stream.coveredSeq) {
        setStream(state.stream.text.slice(0, Math.max(0, state.stream.text.length - frame.discardedChars)));
      }
      if (frame.type === "turn_resumed") say("The session restarted mid-turn; the turn resumes where it was.");
      break;
    case "tool_call_started":
      // The model call that asked for this tool is over: its text joins the conversation (where a reload finds
      // it too), and the stream goes on with the next call's.
      if (frame.seq > state.stream.coveredSeq && state.stream.text) settleStream();
      upsertToolCall(frame.toolCall);
      break;
    case "tool_call_completed":
      upsertToolCall(frame.toolCall);
      removeClientRequest(frame.toolCall.id);
      break;
    case "approval_required":
      // What the server says waits now: nothing decided earlier holds it back (a call id may come again).
      forgetDecisions();
      for (const call of frame.toolCalls) upsertToolCall(call);
      showWorking("waiting");
      el.app.dataset.status = "awaiting_approval";
      refreshSessionsSoon();
      showApprovals(frame.toolCalls);
      // A redraw asked for before this frame (a mode switch's, say) would draw the session as it was, closing
      // the dialog: a newer one supersedes it.
      void reloadSession();
      break;
    case "client_tool_required":
      for (const call of frame.toolCalls) upsertToolCall(call);
      showWorking("waiting");
      el.app.dataset.status = "awaiting_client";
      refreshSessionsSoon();
      showClientRequests(frame.toolCalls);
      void reloadSession();
      break;
    case "elicitation_required":
      showWorking("waiting");
      showElicitation(frame.elicitation);
      void reloadSession();
      break;
    case "elicitation_answered":
      if (state.shownElicitation?.elicitationId === frame.elicitationId) showElicitation(null);
      break;
    case "mode_changed":
      showMode(frame.to);
      say(`Mode changed from ${frame.from} to ${frame.to}: ${frame.reason}`);
      if (frame.branchSessionId) offerSession(frame.branchSessionId);
      break;
    case "turn_completed":
      announce(frame.response.text);
      refreshSessionsSoon();
      void reloadSession().then(() => turnEnded(frame.turnId, frame.response));
      break;
    case "error":
      forgetDecisions();
      say(frame.message, true);
      restoreDraft();
      // A refused action leaves the session as it was: redraw it, so nothing waits unseen.
      void reloadSession();
      break;
    default:
      // pong, and frames this page does not draw.
      break;
  }
}

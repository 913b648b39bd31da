// @ts-check
// Rendering: the conversation, tool calls, the approval dialog's calls, client requests and artifacts.
import { attachmentList } from "./attachments.js";
import { h, prettyJson } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

/**
 * @param {{role: string, kind: string, content: string | null, toolCalls?: Array<{name: string, arguments: string}>, toolCallId?: string, turnId?: string, attachments?: Array<{name: string, mediaType: string, bytes: number, text?: string}>, truncated?: boolean}} message
 * @param {{onTimeline?: (button: HTMLButtonElement) => void, loadWhole?: () => Promise<string>}} [options] `onTimeline`: the answer offers its turn's timeline; `loadWhole`: reads the whole content of a message the view cut
 */
export function messageItem(message, options = {}) {
  if (message.role === "tool") {
    return h(
      "li",
      { class: "message tool" },
      h(
        "details",
        {},
        h("summary", { text: `Tool result for ${message.toolCallId ?? "a call"}` }),
        h("pre", { text: prettyJson(message.content) }),
      ),
    );
  }
  if (message.kind === "workflow") {
    return h("li", { class: "message workflow" }, h("span", { class: "who", text: "Workflow" }), message.content ?? "");
  }
  if (message.kind === "correction") return null;
  const who = message.role === "user" ? "You" : "Agent";
  const calls = message.toolCalls ?? [];
  const files = attachmentList(message.attachments);
  if (!message.content && calls.length === 0 && !files) return null;
  // The agent's words are Markdown, drawn through the sanitiser; the user's own stay plain text.
  const body = h("div", { class: "content" });
  const draw = (/** @type {string} */ content) => {
    if (message.role === "user") body.textContent = content;
    else renderMarkdown(body, content);
  };
  draw(message.content ?? "");
  // The view carries the start of a long message; the rest is read when asked for.
  const loadWhole = options.loadWhole;
  let more = null;
  if (message.truncated && loadWhole) {
    const button = h("button", { type: "button", class: "quiet", text: "Show the whole message" });
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        draw(await loadWhole());
        button.remove();
      } catch {
        button.disabled = false;
      }
    });
    more = button;
  }
  // An answer the person stopped keeps what was streamed, and says it was cut short.
  const stopped = message.kind === "stopped";
  return h(
    "li",
    { class: `message ${message.role === "user" ? "user" : "assistant"}${stopped ? " stopped" : ""}` },
    h("span", { class: "who", text: who }),
    body,
    stopped ? h("p", { class: "stopped-mark", text: "Stopped: the answer was cut short here." }) : null,
    more,
    files,
    calls.length > 0 ? h("span", { class: "who", text: `Called ${calls.map((call) => call.name).join(", ")}` }) : null,
    options.onTimeline && message.turnId ? timelineButton(message.turnId, options.onTimeline) : null,
  );
}

/** The answer's button that opens its turn's waterfall. @param {string} turnId @param {(button: HTMLButtonElement) => void} open */
function timelineButton(turnId, open) {
  const button = h("button", {
    type: "button",
    class: "quiet timeline-open",
    "data-turn-id": turnId,
    "aria-haspopup": "dialog",
    "aria-label": "Timeline: where this turn's time went",
    text: "Timeline",
  });
  button.addEventListener("click", () => open(button));
  return h("div", { class: "message-actions" }, button);
}

/**
 * Where the model was given a summary instead of the messages before it: a marker that opens to the summary.
 * @param {{fromSeq: number, toSeq: number, text: string, createdAt: string, truncated?: boolean}} summary
 * @param {() => Promise<string>} [loadWhole] reads the whole summary when the view's is a preview
 */
export function summaryItem(summary, loadWhole) {
  const text = h("p", { class: "summary-text", text: summary.text });
  // The view carries a preview of a long summary; the rest is read when asked for.
  let more = null;
  if (summary.truncated && loadWhole) {
    more = h("button", { type: "button", class: "quiet", text: "Show the whole summary" });
    more.addEventListener("click", async () => {
      more.disabled = true;
      try {
        text.textContent = await loadWhole();
        more.remove();
      } catch {
        more.disabled = false;
      }
    });
  }
  return h(
    "li",
    { class: "message summary", "data-summary-to-seq": String(summary.toSeq) },
    h("details", {}, h("summary", { text: "Earlier messages were summarised" }), text, more),
  );
}

/** The button at the top of a conversation with older messages still on the server. @param {() => void} onClick */
export function loadEarlierItem(onClick) {
  const button = h("button", { type: "button", class: "quiet", id: "load-earlier", text: "Load earlier messages" });
  button.addEventListener("click", onClick);
  return h("li", { class: "load-earlier" }, button);
}

/** Where a call runs: a tool of an MCP server says which server and which of its tools. */
function callSource(call) {
  return call.mcp
    ? h("span", {
        class: "call-source",
        "data-mcp-server": call.mcp.server,
        text: `MCP server ${call.mcp.server} · tool ${call.mcp.tool}`,
      })
    : null;
}

/**
 * A tool call as the working indicator lists it: name, arguments, then its result or error. A call waiting
 * for approval has already been checked: it shows what the client will be asked to do once approved.
 */
export function toolCallItem(call) {
  const waiting = call.approval === "pending" ? h("p", { class: "status-line", text: "Waiting for approval" }) : null;
  const outcome = call.errorMessage
    ? h("p", { class: "error", text: `Error: ${call.errorMessage}` })
    : call.resultJson
      ? h(
          "details",
          {},
          h("summary", {
            text: call.requiresClientExecution && call.approval !== "denied" ? "Request for your client" : "Result",
          }),
          h("pre", { text: prettyJson(call.resultJson) }),
        )
      : waiting
        ? null
        : h("p", { class: "status-line", text: "Running…" });
  return h(
    "li",
    { "data-tool-call-id": call.id },
    h("strong", { text: call.name }),
    callSource(call),
    h("pre", { text: prettyJson(call.argumentsJson) }),
    waiting,
    outcome,
  );
}

/** One call in the approval dialog: the arguments and an approve / deny choice with a reason. */
export function approvalItem(call) {
  const name = `decision-${call.id}`;
  return h(
    "li",
    { "data-tool-call-id": call.id },
    h(
      "fieldset",
      {},
      h("legend", { text: call.name }),
      callSource(call),
      h("pre", { text: prettyJson(call.argumentsJson) }),
      // A client's tool was prepared before anyone was asked (its preflight): what the client would be sent.
      ...(call.wasExecuted && call.resultJson
        ? [
            h("p", { class: "prepared-label", text: "Prepared request" }),
            h("pre", { class: "prepared", text: prettyJson(call.resultJson) }),
          ]
        : []),
      // No choice is made in advance: the person decides every call (the form asks for each before it is sent).
      h(
        "div",
        { class: "row", role: "radiogroup", "aria-label": `Decision for ${call.name}` },
        h("label", {}, h("input", { type: "radio", name, value: "approve", required: true }), " Approve"),
        h("label", {}, h("input", { type: "radio", name, value: "deny", required: true }), " Deny"),
      ),
      h("label", { for: `reason-${call.id}`, text: "Reason (optional)" }),
      h("input", {
        id: `reason-${call.id}`,
        type: "text",
        name: `reason-${call.id}`,
        autocomplete: "off",
        maxLength: 2000,
      }),
    ),
  );
}

/** What a client's answer to a request looks like, said in words (the browser never makes one up). */
function resultShape(requestJson) {
  try {
    const request = JSON.parse(requestJson ?? "null");
    if (request?.action === "read_file") return 'For a read: {"path": …, "content": the file\'s text}.';
    if (request?.action === "write_file") return 'For a write: {"path": …, "bytesWritten": the bytes written}.';
  } catch {
    // Not JSON: no shape to suggest.
  }
  return "";
}

/**
 * A request for the user's client (an IDE would carry it out). The browser cannot act on files: it says so, shows
 * the prepared request, and asks the person for the result their client gave (pasted, never made up) or a refusal.
 * @param {any} call
 * @param {{onResult: (call: any, resultJson: string) => void, onRefuse: (call: any, reason: string) => void}} actions
 */
export function clientToolItem(call, actions) {
  const resultId = `client-result-${call.id}`;
  const reasonId = `client-reason-${call.id}`;
  const hintId = `client-hint-${call.id}`;
  const result = h("textarea", {
    id: resultId,
    spellcheck: false,
    value: "",
    required: true,
    "aria-describedby": hintId,
  });
  const reason = h("input", { id: reasonId, type: "text", autocomplete: "off", value: "", maxLength: 10_000 });
  return h(
    "article",
    { class: "client-tool", "data-tool-call-id": call.id },
    h("h3", { text: `${call.name} needs your client` }),
    h("p", {
      class: "client-note",
      text: "This browser cannot act on files. Carry out the request below in your own client (your editor or a terminal), then paste the result it gave, or refuse.",
    }),
    h("p", { class: "prepared-label", text: "Prepared request" }),
    h("pre", { class: "prepared", text: prettyJson(call.resultJson) }),
    h("label", { for: resultId, text: "Result from your client (JSON)" }),
    h("p", { id: hintId, class: "client-hint", text: `Nothing is filled in for you. ${resultShape(call.resultJson)}` }),
    result,
    h("label", { for: reasonId, text: "Reason, if you refuse" }),
    reason,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", text: "Send result", onclick: () => actions.onResult(call, result.value) }),
      h("button", {
        type: "button",
        class: "quiet",
        text: "Refuse",
        onclick: () => actions.onRefuse(call, reason.value.trim() || "The user refused to run this on their client."),
      }),
    ),
  );
}

/** A file name for an artifact: its title in lower-case words, and `.md` (artifacts are Markdown). */
export function artifactFileName(artifact) {
  const stem = artifact.title
    .normalize("NFKD")
    .replace(/[^\w\s-]/g, "")
    .trim()
    .replace(/[\s_]+/g, "-")
    .toLowerCase()
    .slice(0, 80);
  return `${stem || artifact.id}.md`;
}

/**
 * Saves an artifact as a file; the file is made when asked for, and its URL let go a minute later.
 * @param {{id: string, title: string, content: string}} artifact
 */
export function downloadArtifact(artifact) {
  const url = URL.createObjectURL(new Blob([artifact.content], { type: "text/markdown;charset=utf-8" }));
  h("a", { href: url, download: artifactFileName(artifact) }).click();
  // Some browsers still read the URL a while after the click.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * An artifact: its title, a button that opens it (drawn as Markdown) and a download link (the text as a file).
 * @param {{id: string, kind: string, title: string, content: string, createdAt: string}} artifact
 * @param {(artifact: any) => void} open
 */
export function artifactItem(artifact, open) {
  const download = h("button", {
    type: "button",
    class: "quiet",
    text: "Download",
    onclick: () => downloadArtifact(artifact),
  });
  return h(
    "li",
    { "data-artifact-id": artifact.id },
    h("span", { class: "artifact-title", text: `${artifact.title} (${artifact.kind})` }),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "quiet", text: "Open", onclick: () => open(artifact) }),
      download,
    ),
  );
}

/**
 * One of the user's sessions in the sidebar: its title, mode and when it changed; marked when it waits for
 * the user, when it is archived, when it is a branch and when it is the one open; with a button that opens its actions (rename,
 * archive, export, delete).
 * @param {{sessionId: string, mode: string, status: string, waitingForUser: boolean, title: string | null, archivedAt?: string | null, branchOf?: object | null, updatedAt: string}} entry
 * @param {{current: boolean, modeName: string, onOpen: (sessionId: string) => void, onManage: (entry: any) => void}} options
 */
export function sessionEntry(entry, options) {
  const when = new Date(entry.updatedAt);
  const title = entry.title ?? "New conversation";
  return h(
    "li",
    { "data-session-id": entry.sessionId, "data-status": entry.status, class: "session-item" },
    h(
      "button",
      {
        type: "button",
        class: "session-entry",
        "aria-current": options.current ? "page" : null,
        onclick: () => options.onOpen(entry.sessionId),
      },
      h("span", { class: "session-title", text: title }),
      h(
        "span",
        { class: "session-meta" },
        `${options.modeName} · `,
        h("time", {
          datetime: entry.updatedAt,
          text: when.toLocaleString([], { dateStyle: "short", timeStyle: "short" }),
        }),
      ),
      entry.waitingForUser ? h("span", { class: "badge", text: "Waiting for you" }) : null,
      entry.status === "running" ? h("span", { class: "badge quiet", text: "Working" }) : null,
      entry.archivedAt ? h("span", { class: "badge quiet", text: "Archived" }) : null,
      // A branch a person started (Edit, Regenerate) has its source's title: the badge tells them apart.
      entry.branchOf ? h("span", { class: "badge quiet", text: "Branch" }) : null,
    ),
    h("button", {
      type: "button",
      class: "quiet session-manage",
      "aria-label": `Manage “${title}”`,
      "aria-haspopup": "dialog",
      title: "Rename, archive, export or delete",
      text: "⋯",
      onclick: () => options.onManage(entry),
    }),
  );
}

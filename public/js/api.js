// @ts-check
// The console's HTTP client: the key goes in the Authorization header only, errors keep OpenAI's shape.

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{message?: string, type?: string, code?: string | null, param?: string | null}} error
   */
  constructor(status, error) {
    super(error.message ?? `Request failed with status ${status}.`);
    this.name = "ApiError";
    this.status = status;
    this.code = error.code ?? null;
    this.param = error.param ?? null;
  }
}

/** Where the console and the admin page keep the key the user signed in with (this tab's sessionStorage). */
export const KEY_STORAGE = "aptix.apiKey";

const BOOKMARK_HEADER = "x-d1-bookmark";
const BOOKMARK_STORAGE = "aptix.d1Bookmark";

export class ApiClient {
  /** @param {string} apiKey */
  constructor(apiKey) {
    this.apiKey = apiKey;
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   */
  async request(method, path, body) {
    const headers = { authorization: `Bearer ${this.apiKey}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    // The newest D1 bookmark this tab was answered with goes back, so it reads its own writes (docs/api.md).
    const bookmark = sessionStorage.getItem(BOOKMARK_STORAGE);
    if (bookmark) headers[BOOKMARK_HEADER] = bookmark;
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answered = response.headers.get(BOOKMARK_HEADER);
    if (answered && answered > (sessionStorage.getItem(BOOKMARK_STORAGE) ?? "")) {
      sessionStorage.setItem(BOOKMARK_STORAGE, answered);
    }
    const text = await response.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      throw new ApiError(response.status, parsed?.error ?? { message: text || response.statusText });
    }
    return parsed;
  }

  listModes() {
    return this.request("GET", "/modes");
  }

  workflowCategories() {
    return this.request("GET", "/workflows/categories");
  }

  /** @param {string} [mode] */
  createSession(mode) {
    return this.request("POST", "/context/sessions", mode ? { mode } : {});
  }

  /** The user's sessions, newest change first; `cursor` is the previous page's nextCursor. @param {string} [cursor] */
  listSessions(cursor) {
    return this.request("GET", `/context/sessions${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`);
  }

  /** @param {string} sessionId */
  getSession(sessionId) {
    return this.request("GET", `/context/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** @param {string} sessionId @param {string} content */
  sendMessage(sessionId, content) {
    return this.request("POST", `/context/sessions/${encodeURIComponent(sessionId)}/messages`, { content });
  }

  /** @param {string} sessionId @param {Array<{toolCallId: string, approved: boolean, reason?: string}>} decisions */
  submitApprovals(sessionId, decisions) {
    return this.request("POST", `/context/sessions/${encodeURIComponent(sessionId)}/approvals`, { decisions });
  }

  /** @param {string} sessionId @param {Array<{toolCallId: string, resultJson?: string, errorMessage?: string}>} results */
  submitToolResults(sessionId, results) {
    return this.request("POST", `/context/sessions/${encodeURIComponent(sessionId)}/tool-results`, { results });
  }

  /**
   * The user's answer to a question an MCP server asks mid-call; answers once the turn stops again.
   * @param {string} sessionId @param {string} elicitationId
   * @param {{action: "accept" | "decline" | "cancel", content?: Record<string, unknown>}} answer
   */
  answerElicitation(sessionId, elicitationId, answer) {
    return this.request(
      "POST",
      `/context/sessions/${encodeURIComponent(sessionId)}/elicitations/${encodeURIComponent(elicitationId)}`,
      answer,
    );
  }

  /** @param {string} sessionId @param {string} workflowId @param {Record<string, unknown>} parameters */
  runWorkflow(sessionId, workflowId, parameters) {
    return this.request(
      "POST",
      `/context/sessions/${encodeURIComponent(sessionId)}/workflows/${encodeURIComponent(workflowId)}`,
      { parameters },
    );
  }

  /** @param {string} sessionId */
  wsTicket(sessionId) {
    return this.request("POST", `/context/sessions/${encodeURIComponent(sessionId)}/ws-ticket`);
  }
}

// @ts-check
// The console's HTTP client: a key goes in the Authorization header only; signed in by single sign-on, the
// browser's session cookie goes by itself and every request that changes anything carries the session's CSRF
// token. Errors keep OpenAI's shape.

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

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export class ApiClient {
  /**
   * A key's client, a browser session's (its CSRF token), or, behind Cloudflare Access, one that sends nothing of
   * its own (Access signs each request in).
   * @param {{apiKey: string} | {csrfToken: string} | {access: true}} credential
   */
  constructor(credential) {
    /** @type {string | null} */
    this.apiKey = "apiKey" in credential ? credential.apiKey : null;
    /** @type {string | null} */
    this.csrfToken = "csrfToken" in credential ? credential.csrfToken : null;
  }

  /**
   * The client of this browser's session after single sign-on, or null when it has none (never signed in,
   * signed out, or ended).
   * @returns {Promise<ApiClient | null>}
   */
  static async ofBrowserSession() {
    // GET /auth/session answers 200 either way: a page without a session logs no failed request.
    const response = await fetch("/auth/session", { headers: { accept: "application/json" } });
    if (!response.ok) return null;
    const session = await response.json();
    if (!session?.signedIn) return null;
    if (session.via === "cloudflare_access") return new ApiClient({ access: true });
    return session.csrfToken ? new ApiClient({ csrfToken: session.csrfToken }) : null;
  }

  /** How one may sign in here. @returns {Promise<{singleSignOn: {loginUrl: string, issuer: string} | null}>} */
  static async providers() {
    const response = await fetch("/auth/providers", { headers: { accept: "application/json" } });
    return response.ok ? response.json() : { singleSignOn: null };
  }

  /** Ends a browser session server-side (a key has nothing to end). */
  async signOut() {
    if (this.csrfToken) await this.request("POST", "/auth/logout").catch(() => {});
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   */
  async request(method, path, body) {
    const response = await this.send(method, path, body);
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

  /**
   * The request with the credential, the CSRF token and the D1 bookmark; the answer as it came.
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @param {string} [accept]
   */
  async send(method, path, body, accept = "application/json") {
    /** @type {Record<string, string>} */
    const headers = { accept };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    else if (this.csrfToken && !SAFE_METHODS.has(method)) headers["x-csrf-token"] = this.csrfToken;
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
    return response;
  }

  /** The MCP clients the caller allowed to act for them (OAuth grants). */
  listGrants() {
    return this.request("GET", "/context/grants");
  }

  /** @param {string} id */
  revokeGrant(id) {
    return this.request("DELETE", `/context/grants/${encodeURIComponent(id)}`);
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

  /**
   * The user's sessions, newest change first; `cursor` is the previous page's nextCursor. Archived ones only with
   * `archived`; `q` keeps those whose title contains it.
   * `branchOf` keeps the branches started from that session.
   * @param {string} [cursor]
   * @param {{archived?: boolean, q?: string, branchOf?: string, limit?: number}} [filter]
   */
  listSessions(cursor, filter = {}) {
    const query = new URLSearchParams();
    if (cursor) query.set("cursor", cursor);
    if (filter.archived) query.set("archived", "true");
    if (filter.q) query.set("q", filter.q);
    if (filter.branchOf) query.set("branchOf", filter.branchOf);
    if (filter.limit) query.set("limit", String(filter.limit));
    const search = query.toString();
    return this.request("GET", `/context/sessions${search ? `?${search}` : ""}`);
  }

  /**
   * Renames (null: the automatic title again) or archives a session; answers its list entry.
   * @param {string} sessionId @param {{title?: string | null, archived?: boolean}} change
   */
  changeSession(sessionId, change) {
    return this.request("PATCH", `/context/sessions/${encodeURIComponent(sessionId)}`, change);
  }

  /** Deletes a session for good. @param {string} sessionId */
  deleteSession(sessionId) {
    return this.request("DELETE", `/context/sessions/${encodeURIComponent(sessionId)}`);
  }

  /**
   * The whole session as a file: its content and the name the server gives it.
   * @param {string} sessionId @param {"json" | "markdown"} format
   * @returns {Promise<{blob: Blob, filename: string}>}
   */
  async exportSession(sessionId, format) {
    const path = `/context/sessions/${encodeURIComponent(sessionId)}/export?format=${format}`;
    const response = await this.send("GET", path, undefined, format === "json" ? "application/json" : "text/markdown");
    if (!response.ok) {
      const parsed = await response.json().catch(() => null);
      throw new ApiError(response.status, parsed?.error ?? { message: response.statusText });
    }
    const named = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "");
    return { blob: await response.blob(), filename: named?.[1] ?? `session.${format === "json" ? "json" : "md"}` };
  }

  /**
   * A new session branched from `sessionId` before the user's message `beforeMessage` (the conversation before it).
   * @param {string} sessionId @param {number} beforeMessage
   * @returns {Promise<{sessionId: string, mode: string, branchOf: {sessionId: string, beforeMessage: number, seededThrough: number}}>}
   */
  createBranch(sessionId, beforeMessage) {
    return this.request("POST", `/context/sessions/${encodeURIComponent(sessionId)}/branches`, { beforeMessage });
  }

  /** @param {string} sessionId */
  getSession(sessionId) {
    return this.request("GET", `/context/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** The whole summary of a session's earlier messages (its view carries a preview). @param {string} sessionId */
  getSummary(sessionId) {
    return this.request("GET", `/context/sessions/${encodeURIComponent(sessionId)}/summary`);
  }

  /** A turn's steps on its time axis (the waterfall). @param {string} sessionId @param {string} turnId */
  turnTimeline(sessionId, turnId) {
    return this.request(
      "GET",
      `/context/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/timeline`,
    );
  }

  /** Older messages, newest first: those before seq `before`. @param {string} sessionId @param {number} before */
  getMessages(sessionId, before) {
    return this.request("GET", `/context/sessions/${encodeURIComponent(sessionId)}/messages?before=${before}`);
  }

  /** One message whole (the view cuts a long one's content). @param {string} sessionId @param {number} seq */
  getMessage(sessionId, seq) {
    return this.request("GET", `/context/sessions/${encodeURIComponent(sessionId)}/messages?before=${seq + 1}&limit=1`);
  }

  /**
   * @param {string} sessionId @param {string} content
   * @param {Array<{name: string, mediaType: string, text?: string, data?: string}>} [attachments]
   */
  sendMessage(sessionId, content, attachments = []) {
    const body = attachments.length > 0 ? { content, attachments } : { content };
    return this.request("POST", `/context/sessions/${encodeURIComponent(sessionId)}/messages`, body);
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

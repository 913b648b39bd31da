// @ts-check
// The console's one state object: everything the page knows of the signed-in person, the open session, its
// turn, its dialogs and the conversation list. Modules read and change it; frames change it through the reducer.

export const SESSION_STORAGE = "aptix.sessionId";

export const state = {
  /** @type {import("./api.js").ApiClient | null} */ api: null,
  /** @type {import("./socket.js").SessionSocket | null} */ socket: null,
  sessionId: "",
  mode: "",
  status: "idle",
  modes: [],
  categories: [],
  /** Calls of the open turn, by id, as the working indicator shows them. */
  turnCalls: new Map(),
  /** Client requests on screen, by call id. */
  clientCalls: new Map(),
  turnInFlight: false,
  messageCounter: 0,
  /**
   * A message sent and not yet confirmed started, with its files (a refusal puts both back).
   * @type {{ clientMessageId: string, content: string, files: any[] } | null}
   */
  draft: null,
  /** The answer streaming in: its text, and the seq up to which session_state's streamedText already has it. */
  stream: { text: "", coveredSeq: 0, drawPending: false },
  /** The sidebar's sessions, newest change first, and the cursor of the next page (null: none). */
  sessions: [],
  /** @type {string | null} */ sessionsCursor: null,
  /** What the sidebar lists: archived sessions or the others, and those whose title contains `q`. */
  sessionFilter: { archived: false, q: "" },
  /** The sidebar's pending refresh and search (timer ids). */
  sessionsTimer: 0,
  searchTimer: 0,
  /** @type {string | null} The newest ended turn of the session as last drawn. */ lastEndedTurnId: null,
  /** Turns the page has seen end, by id: the socket's turn_completed and a message sent over HTTP may both tell one. */
  endedTurns: new Set(),
  /**
   * The drawn session's messages the page has, by seq: each view's newest page, and older pages loaded on demand;
   * whether older ones remain on the server; and the summary the model is sent in place of the earliest.
   */
  conversation: {
    sessionId: "",
    /** @type {Map<number, any>} */ messages: new Map(),
    hasEarlier: false,
    /** @type {{fromSeq: number, toSeq: number, text: string, createdAt: string, truncated?: boolean} | null} */ summary:
      null,
  },
  /** Redraws from GET: how many were asked for, and the newest (a stale one waits for it). */
  reloads: 0,
  /** @type {Promise<void>} */ newestReload: Promise.resolve(),
  /**
   * Turns this page saw start (turn_started, or a message sent over HTTP). A redraw asked for before one started
   * shows the session as it was before it (idle), and would hide the turn's bar and its Stop: it asks again.
   */
  turnStarts: 0,
  /**
   * The calls the user has just decided. A redraw of the session as it was before the server took the decisions (one
   * asked for earlier and answered later) must not ask for them again. Forgotten when the server asks for approvals
   * again, refuses an action, or the socket connects (again, or for another session): a redraw then shows what waits.
   * @type {Set<string>}
   */
  decidedIds: new Set(),
  /** The calls the approval dialog shows, and their ids as one string (the same calls again keep its state). */
  pendingApprovals: [],
  approvalIds: "",
  /** The question an MCP server asks the user mid-call, as the dialog shows it (null: none). @type {any} */
  shownElicitation: null,
  /** @type {any} */ shownArtifact: null,
  /**
   * Whether the person is an org admin (the admin page's link shows): the org's memories are theirs to change. Known
   * a moment after signing in: `adminCheck` settles with it.
   */
  isAdmin: false,
  /** @type {Promise<boolean>} */ adminCheck: Promise.resolve(false),
  /** Memory marks undone on this page, by tool call id (a redraw keeps them undone). @type {Set<string>} */
  undoneMemories: new Set(),
  /** A message a search opened, highlighted for a moment: its session, its seq (null: none). @type {{sessionId: string, seq: number} | null} */
  foundMessage: null,
  /** The button that opened the timeline: the focus goes back to it when the dialog closes. @type {HTMLElement | null} */
  timelineOpener: null,
};

/** The calls decided are forgotten: what still waits is asked again at the next redraw. */
export function forgetDecisions() {
  state.decidedIds.clear();
}

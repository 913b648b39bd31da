// @ts-check
// One WebSocket per session: opened with a single-use ticket (never the key), reconnected with the last
// seq seen so nothing is missed or shown twice (docs/protocol.md).

import { LOGGED_FRAME_TYPES } from "./frames.js";

/** @type {Set<string>} */
const LOGGED = new Set(LOGGED_FRAME_TYPES);

/** A ping this often; a socket whose pong has not come back by the next one is taken for dead (a sleeping phone). */
const HEARTBEAT_MS = 25_000;

export class SessionSocket {
  /**
   * @param {import("./api.js").ApiClient} api
   * @param {string} sessionId
   * @param {{onFrame: (frame: any) => void, onStatus: (connected: boolean) => void}} handlers
   */
  constructor(api, sessionId, handlers) {
    this.api = api;
    this.sessionId = sessionId;
    this.handlers = handlers;
    /** The newest logged frame the page has; null until the first session_state says where the log is. */
    this.lastSeq = null;
    this.socket = null;
    this.closed = false;
    this.retries = 0;
    this.retryTimer = null;
    this.heartbeat = null;
    this.awaitingPong = false;
  }

  /** Opens the socket; the first connect takes the log as it is, reconnects replay what was missed. */
  async connect() {
    this.closed = false;
    await this.open();
  }

  async open() {
    if (this.closed) return;
    let ticket;
    try {
      ticket = (await this.api.wsTicket(this.sessionId)).ticket;
    } catch (error) {
      this.handlers.onStatus(false);
      if (error?.status === 401 || error?.status === 404) return;
      this.scheduleReconnect();
      return;
    }
    if (this.closed) return;
    const url = new URL(`/context/sessions/${encodeURIComponent(this.sessionId)}/ws`, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("ticket", ticket);
    if (this.lastSeq !== null) url.searchParams.set("afterSeq", String(this.lastSeq));
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.retries = 0;
      this.awaitingPong = false;
      this.heartbeat = setInterval(() => this.beat(socket), HEARTBEAT_MS);
      this.handlers.onStatus(true);
    });
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", () => this.dropped(socket));
  }

  /** A ping, or, when the last one went unanswered, the end of a socket that only looks open. */
  beat(socket) {
    if (!this.awaitingPong) {
      this.awaitingPong = true;
      this.send({ type: "ping" });
      return;
    }
    this.dropped(socket);
    socket.close(4000, "no pong");
  }

  dropped(socket) {
    if (this.socket !== socket) return;
    clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.socket = null;
    this.handlers.onStatus(false);
    this.scheduleReconnect();
  }

  /** @param {string} data */
  receive(data) {
    // A socket being closed (a new session, sign-out) may still deliver frames; they are not this page's.
    if (this.closed) return;
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (frame.type === "pong") this.awaitingPong = false;
    if (frame.type === "session_state" && this.lastSeq === null) this.lastSeq = frame.lastSeq;
    if (LOGGED.has(frame.type)) {
      // A frame the page has already seen (live, then again in a replay) is dropped here.
      if (frame.seq <= this.lastSeq) return;
      this.lastSeq = frame.seq;
    }
    this.handlers.onFrame(frame);
  }

  scheduleReconnect() {
    if (this.closed || this.retryTimer) return;
    const delay = Math.min(10_000, 250 * 2 ** this.retries++);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.open();
    }, delay);
  }

  get isOpen() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** @param {Record<string, unknown>} frame @returns {boolean} whether it went out */
  send(frame) {
    if (!this.isOpen) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    clearInterval(this.heartbeat);
    this.heartbeat = null;
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, "closed by the console");
  }
}

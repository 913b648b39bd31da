// The session's WebSocket door (docs/protocol.md): a socket opened with a single-use ticket (hibernation API), its
// client frames (a message, decisions, results, an answer, cancel, resume, ping), and what it is sent on connect or
// resume: session_state, then the logged frames it missed.
import { z } from "zod";
import type { AdminLogger } from "../observability/admin-logger";
import type { Outcome } from "../refusal";
import type { DirectFrame, SessionStateFrame } from "../wire/frames";
import type { Caller } from "./caller";
import type { ElicitationDesk } from "./elicitations";
import type { EventLog } from "./event-log";
import type { FrameHub } from "./frame-hub";
import { guardrailStop } from "./guardrail-stop";
import { parseClientFrame } from "./protocol";
import { SESSION_DELETED_CLOSE_CODE } from "./session-keeper";
import type { SessionStore } from "./session-store";
import { sessionStateFrame } from "./session-view";
import { invalidTicketResponse, type TicketStore, upgradeRequiredResponse } from "./tickets";
import type { TurnDriver } from "./turn-driver";

/** What a hibernated socket remembers: whose it is, and the newest frame logged when it connected. */
const SocketAttachment = z.object({
  org: z.string(),
  user: z.string(),
  keyId: z.string(),
  connectedAtSeq: z.number().int(),
});
type SocketAttachment = z.infer<typeof SocketAttachment>;

/** Who holds a socket: the person and the key (or signed-in person's bucket) its ticket was issued to. */
export type SocketHolder = Pick<SocketAttachment, "org" | "user" | "keyId">;

export interface SessionSocketsDeps {
  ctx: DurableObjectState;
  store: SessionStore;
  events: EventLog;
  frames: FrameHub;
  tickets: TicketStore;
  driver: TurnDriver;
  desk: () => ElicitationDesk;
  /**
   * The holder as a caller who may act on the session now (their key not revoked or expired, not disabled, still its
   * owner or an admin of its org, by their standing now), or null. A socket's rights are not those it opened with.
   */
  standing: (holder: SocketHolder) => Promise<Caller | null>;
  logger: AdminLogger;
}

export class SessionSockets {
  constructor(private readonly deps: SessionSocketsDeps) {}

  /**
   * `GET /ws?ticket=...[&afterSeq=N]`, refused before the upgrade when the ticket fails. A session that does not
   * exist answers exactly as a bad ticket does, so the door tells a caller without a ticket nothing about which
   * sessions exist.
   */
  async accept(request: Request): Promise<Response> {
    const { ctx, store, tickets, events } = this.deps;
    const url = new URL(request.url);
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return upgradeRequiredResponse();
    const record = store.record();
    const holder = url.pathname === "/ws" && record ? await tickets.redeem(url.searchParams.get("ticket") ?? "") : null;
    if (!record || !holder || holder.org !== record.org) return invalidTicketResponse();
    const afterSeq = Number.parseInt(url.searchParams.get("afterSeq") ?? "", 10);
    const { 0: client, 1: server } = new WebSocketPair();
    ctx.acceptWebSocket(server);
    const attachment: SocketAttachment = {
      org: holder.org,
      user: holder.user,
      keyId: holder.keyId,
      connectedAtSeq: events.lastSeq(),
    };
    server.serializeAttachment(attachment);
    if (Number.isInteger(afterSeq) && afterSeq >= 0) this.replay(server, afterSeq, attachment.connectedAtSeq);
    else this.sendDirect(server, this.sessionState());
    return new Response(null, { status: 101, webSocket: client });
  }

  async message(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const parsed = parseClientFrame(message);
    if (!parsed.ok) return this.sendDirect(ws, { type: "error", code: parsed.code, message: parsed.message });
    const frame = parsed.frame;
    if (frame.type === "ping") return this.sendDirect(ws, { type: "pong" });
    const attachment = SocketAttachment.parse(ws.deserializeAttachment());
    // Every frame that reads or acts is its holder's as they stand now: a key narrowed or revoked, a person disabled
    // or no longer an admin since the socket opened, and the socket is refused and closed.
    const caller = await this.callerOf(ws, attachment);
    if (!caller) return;
    const { driver } = this.deps;
    switch (frame.type) {
      case "resume":
        return this.replay(ws, frame.afterSeq, attachment.connectedAtSeq);
      case "cancel":
        return this.answer(ws, driver.cancel(caller));
      case "user_message":
        return this.answer(
          ws,
          await driver.turn(
            { kind: "message", content: frame.content, attachments: frame.attachments ?? [] },
            { caller, clientMessageId: frame.clientMessageId },
          ),
        );
      case "approval":
        return this.answer(ws, await driver.turn({ kind: "approvals", decisions: frame.decisions }, { caller }));
      case "tool_results":
        return this.answer(ws, await driver.turn({ kind: "tool_results", results: frame.results }, { caller }));
      case "elicitation_response": {
        const { elicitationId, action, content } = frame;
        const answer = { action, ...(content ? { content } : {}) };
        return this.answer(ws, this.deps.desk().answer(elicitationId, answer) ?? { ok: true, value: null });
      }
    }
  }

  /**
   * Closes each open socket whose holder may no longer act on the session (run as a turn starts: a socket that only
   * listens is checked too, not only one that sends). Holders are read once each, their standing cached as a key's is.
   */
  async recheck(): Promise<void> {
    const sockets = this.deps.ctx.getWebSockets();
    await Promise.all(
      sockets.map((ws) => this.callerOf(ws, SocketAttachment.parse(ws.deserializeAttachment()), { listening: true })),
    );
  }

  /**
   * The socket's holder as a caller now, or null: then the socket has been told and closed. A standing that cannot be
   * read refuses the frame the socket sent (it may send it again); a socket that only listens is left as it is.
   */
  private async callerOf(
    ws: WebSocket,
    attachment: SocketAttachment,
    { listening = false } = {},
  ): Promise<Caller | null> {
    const { org, user, keyId } = attachment;
    let caller: Caller | null;
    try {
      caller = await this.deps.standing({ org, user, keyId });
    } catch (error) {
      this.deps.logger.addException("[Session_Socket]", error);
      if (!listening) {
        this.sendDirect(ws, {
          type: "error",
          code: "internal_error",
          message: "Your standing could not be read; try again.",
        });
      }
      return null;
    }
    if (caller) return caller;
    this.sendDirect(ws, { type: "error", code: "session_not_found", message: "Session not found." });
    try {
      ws.close(SESSION_DELETED_CLOSE_CODE, "Session not found.");
    } catch {
      // Closed on the other side already.
    }
    return null;
  }

  close(ws: WebSocket, code: number): void {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
    } catch {
      // The socket is already closed on the other side.
    }
  }

  /** The session as a socket sees it on connect: its state, a question waiting, the running turn's text so far. */
  sessionState(): SessionStateFrame {
    const { store, events, ctx, driver } = this.deps;
    const state = sessionStateFrame(store, ctx.id.toString(), events.lastSeq());
    const question = this.deps.desk().pending();
    const turnId = driver.runningTurnId();
    return {
      ...state,
      ...(question ? { pendingElicitation: question } : {}),
      ...(turnId ? { streamedText: events.streamedText(turnId) } : {}),
    };
  }

  private answer(ws: WebSocket, outcome: Outcome<unknown>): void {
    if (!outcome.ok) this.sendDirect(ws, { type: "error", code: outcome.code, message: outcome.message });
    const stopped = guardrailStop(outcome);
    if (stopped) this.sendDirect(ws, { type: "error", ...stopped });
  }

  private sendDirect(ws: WebSocket, frame: DirectFrame): void {
    try {
      this.deps.frames.sendDirect(ws, frame);
    } catch {
      // The socket is closing on the other side: nothing to tell it.
    }
  }

  private replay(ws: WebSocket, afterSeq: number, connectedAtSeq: number): void {
    this.deps.frames.replay(ws, afterSeq, connectedAtSeq, this.sessionState());
  }
}

// The session WebSocket protocol (docs/protocol.md): client frames parsed with zod, server frames typed.

import { z } from "zod";
import type { AgentExecuteResponse, AgentToolCall } from "../agent/agent-tool-call";
import type { SessionStatus } from "../agent/turn-store";
import { quoted } from "../quote";

/** Workers in production close a socket that receives a message over 1 MiB (code 1009). */
export const PLATFORM_MAX_MESSAGE_BYTES = 1_048_576;

/**
 * Largest client frame accepted, in bytes: below the platform's limit, so a frame between the two gets a
 * `frame_too_large` error naming the way out (POST .../tool-results) instead of a closed socket.
 */
export const MAX_CLIENT_FRAME_BYTES = 1_000_000;

const Decision = z.strictObject({
  toolCallId: z.string().min(1),
  approved: z.boolean(),
  reason: z.string().max(2_000).optional(),
});
const ToolResult = z
  .strictObject({
    toolCallId: z.string().min(1),
    resultJson: z.string().optional(),
    errorMessage: z.string().min(1).max(10_000).optional(),
  })
  .refine((r) => (r.resultJson === undefined) !== (r.errorMessage === undefined), {
    error: "needs exactly one of resultJson and errorMessage",
  });

export const ClientFrame = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("user_message"),
    content: z.string().trim().min(1, "must not be empty").max(100_000),
    clientMessageId: z.string().min(1).max(200),
  }),
  z.strictObject({ type: z.literal("approval"), decisions: z.array(Decision).min(1) }),
  z.strictObject({ type: z.literal("tool_results"), results: z.array(ToolResult).min(1) }),
  z.strictObject({ type: z.literal("cancel") }),
  z.strictObject({ type: z.literal("resume"), afterSeq: z.number().int().min(0) }),
  z.strictObject({ type: z.literal("ping") }),
]);
export type ClientFrame = z.output<typeof ClientFrame>;

export const CLIENT_FRAME_TYPES = ["user_message", "approval", "tool_results", "cancel", "resume", "ping"] as const;

/** Frames that record what happened to the session: written to the event log, then sent to every socket. */
export type LoggedFrame =
  | { type: "turn_started"; turnId: string; clientMessageId: string | null }
  | { type: "assistant_delta"; turnId: string; text: string }
  | { type: "tool_call_started"; turnId: string; toolCall: AgentToolCall }
  | { type: "tool_call_completed"; turnId: string; toolCall: AgentToolCall }
  | { type: "approval_required"; turnId: string; toolCalls: AgentToolCall[] }
  | { type: "client_tool_required"; turnId: string; toolCalls: AgentToolCall[] }
  | { type: "mode_changed"; turnId: string | null; from: string; to: string; reason: string; branchSessionId?: string }
  | { type: "turn_completed"; turnId: string; response: AgentExecuteResponse };

export interface SessionStateFrame {
  type: "session_state";
  sessionId: string;
  mode: string;
  status: SessionStatus;
  pendingToolCalls: AgentToolCall[];
  /** The seq of the newest logged frame. */
  lastSeq: number;
  turnInFlight: boolean;
  /** Set when a resume asked for frames the bounded log no longer has: reload the session with GET. */
  framesMissing?: boolean;
}

/** Frames for one socket only (not logged): they carry the seq of the newest logged frame. */
export type DirectFrame = SessionStateFrame | { type: "error"; code: string; message: string } | { type: "pong" };

export type ServerFrame = (LoggedFrame | DirectFrame) & { seq: number };

/** A client frame, or the error frame that names what is wrong with it. */
export function parseClientFrame(
  data: string | ArrayBuffer,
): { ok: true; frame: ClientFrame } | { ok: false; code: string; message: string } {
  const size = typeof data === "string" ? new TextEncoder().encode(data).byteLength : data.byteLength;
  if (size > MAX_CLIENT_FRAME_BYTES) {
    return {
      ok: false,
      code: "frame_too_large",
      message:
        `The frame has ${size} bytes; the limit is ${MAX_CLIENT_FRAME_BYTES} (the platform closes a socket on a ` +
        `message over ${PLATFORM_MAX_MESSAGE_BYTES}). Send large tool results with POST ` +
        "/context/sessions/:sessionId/tool-results, which takes up to MAX_TOOL_RESULT_BYTES.",
    };
  }
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, code: "malformed_frame", message: "The frame is not valid JSON." };
  }
  const type = typeof raw === "object" && raw !== null && "type" in raw ? (raw as { type: unknown }).type : undefined;
  if (typeof type !== "string" || !(CLIENT_FRAME_TYPES as readonly string[]).includes(type)) {
    return {
      ok: false,
      code: "unknown_frame_type",
      message: `Unknown frame type ${typeof type === "string" ? quoted(type) : "(none)"}; expected one of ${CLIENT_FRAME_TYPES.join(", ")}.`,
    };
  }
  const parsed = ClientFrame.safeParse(raw);
  if (parsed.success) return { ok: true, frame: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue?.path.join(".") ?? "";
  return {
    ok: false,
    code: "invalid_frame",
    message: `Invalid ${type} frame: ${path ? `'${path}' ` : ""}${issue?.message ?? "is invalid"}.`,
  };
}

// The session WebSocket protocol (docs/protocol.md): the size limit and parsing of client frames; the frames
// themselves are in the wire (src/wire/frames.ts), sharing their fields with REST.

import { quoted } from "../quote";
import { CLIENT_FRAME_TYPES, ClientFrame } from "../wire/frames";
import { fieldMessage, firstProblem } from "../zod-issues";

/** Workers in production close a socket that receives a message over 1 MiB (code 1009). */
export const PLATFORM_MAX_MESSAGE_BYTES = 1_048_576;

/**
 * Largest client frame accepted, in bytes: below the platform's limit, so a frame between the two gets a
 * `frame_too_large` error naming the way out (POST .../tool-results) instead of a closed socket.
 */
export const MAX_CLIENT_FRAME_BYTES = 1_000_000;

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
  // The same reading and wording of a schema failure as a REST body's (the fields are the same schemas).
  return { ok: false, code: "invalid_frame", message: fieldMessage(firstProblem(parsed.error), `${type} frame`) };
}

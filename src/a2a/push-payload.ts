// What an A2A push notification carries (A2A 1.0: a StreamResponse, as the SDK's own sender sends it): the task's
// status update made from a turn's event (turn.completed, turn.failed, turn.paused: its state, and the summary the
// event carries as the agent's words), and the token the client gave its config, in X-A2A-Notification-Token.
import { A2A_CONTENT_TYPE, StreamResponse } from "@a2a-js/sdk";
import { z } from "zod";
import type { SecretBox } from "../tenancy/secret-box";
import type { QueuedEvent } from "../webhooks/queue-message";
import { agentMessage, stateOf, textPart } from "./task-shapes";

/** The header the client's token travels in (the SDK's sender's default). */
export const NOTIFICATION_TOKEN_HEADER = "X-A2A-Notification-Token";

const TurnEventData = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  status: z.string(),
  summary: z.string().optional(),
});

/** The turn statuses an event names, as a task's. */
function turnStatusOf(status: string): "completed" | "failed" | "cancelled" | "paused" {
  if (status === "completed" || status === "cancelled" || status === "paused") return status;
  return status.startsWith("awaiting_") ? "paused" : "failed";
}

/** The body of a push notification for `queued` (a turn's event): the task's status update, as JSON. */
export function a2aPushPayload(queued: QueuedEvent): string {
  const data = TurnEventData.parse(queued.event.data);
  const ids = { sessionId: data.sessionId, turnId: data.turnId };
  const status = turnStatusOf(data.status);
  const message = data.summary ? agentMessage(ids, `push-${status}`, [textPart(data.summary)]) : undefined;
  return JSON.stringify(
    StreamResponse.toJSON({
      payload: {
        $case: "statusUpdate",
        value: {
          taskId: data.turnId,
          contextId: data.sessionId,
          status: { state: stateOf(status), message, timestamp: queued.at },
          metadata: undefined,
        },
      },
    }),
  );
}

/** The headers a push notification adds to the signed delivery's: A2A's content type, and the client's token. */
export async function a2aPushHeaders(
  box: SecretBox,
  org: string,
  endpointId: string,
  token: Parameters<SecretBox["open"]>[2] | null,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = { "content-type": A2A_CONTENT_TYPE };
  if (token) headers[NOTIFICATION_TOKEN_HEADER] = await box.open(org, `a2a-token:${endpointId}`, token);
  return headers;
}

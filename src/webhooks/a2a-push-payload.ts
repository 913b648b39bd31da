// What an A2A push notification carries (A2A 1.0: a StreamResponse, as the SDK's own sender sends it), for the
// A2A door's push configs (src/a2a/push-configs.ts), which are endpoints of this queue: the task's status update
// made from a turn's event (turn.completed, turn.failed, turn.paused: its state, and the summary the event carries
// as the agent's words), and the token the client gave its config, in X-A2A-Notification-Token. Built from the
// SDK's types alone (src/a2a/ reads sessions, which publish here).
import { A2A_CONTENT_TYPE, type Message, Role, StreamResponse, TaskState } from "@a2a-js/sdk";
import { z } from "zod";
import type { SecretBox } from "../tenancy/secret-box";
import type { QueuedEvent } from "./queue-message";

/** The header the client's token travels in (the SDK's sender's default). */
export const NOTIFICATION_TOKEN_HEADER = "X-A2A-Notification-Token";

const TurnEventData = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  status: z.string(),
  summary: z.string().optional(),
});

/** A turn event's status as the task's state: its end, or input-required while it waits (paused, awaiting_*). */
function stateOf(status: string): TaskState {
  if (status === "completed") return TaskState.TASK_STATE_COMPLETED;
  if (status === "cancelled") return TaskState.TASK_STATE_CANCELED;
  if (status === "paused" || status.startsWith("awaiting_")) return TaskState.TASK_STATE_INPUT_REQUIRED;
  return TaskState.TASK_STATE_FAILED;
}

/** The agent's words on the task: the event's summary. */
function summaryMessage(data: z.infer<typeof TurnEventData>): Message | undefined {
  if (!data.summary) return undefined;
  return {
    messageId: `${data.turnId}-push-${data.status}`,
    contextId: data.sessionId,
    taskId: data.turnId,
    role: Role.ROLE_AGENT,
    parts: [
      { content: { $case: "text", value: data.summary }, metadata: undefined, filename: "", mediaType: "text/plain" },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The body of a push notification for `queued` (a turn's event): the task's status update, as JSON. */
export function a2aPushPayload(queued: QueuedEvent): string {
  const data = TurnEventData.parse(queued.event.data);
  return JSON.stringify(
    StreamResponse.toJSON({
      payload: {
        $case: "statusUpdate",
        value: {
          taskId: data.turnId,
          contextId: data.sessionId,
          status: { state: stateOf(data.status), message: summaryMessage(data), timestamp: queued.at },
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

// A turn's timeline as a client reads it (GET /context/sessions/:id/turns/:turnId/timeline): the steps the session
// object recorded (src/observability/turn-observer.ts's TimelineStep), each placed on the turn's time axis.
import { z } from "zod";
import { SessionStatus, TurnRecord } from "./turn";

export const TIMELINE_STEP_KINDS = ["run", "model_call", "tool_call", "wait", "failover", "restart"] as const;

/** A step's fields besides its times: the same stored as answered (TimelineStep's, in turn-observer.ts). */
export const timelineStepFields = {
  kind: z.enum(TIMELINE_STEP_KINDS),
  name: z.string(),
  route: z.string().optional(),
  provider: z.string().optional(),
  model: z.string().optional(),
  ttftMs: z.number().nullable().optional(),
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  /** Of `inputTokens`, those read from the provider's prompt cache, and those written to it. */
  cachedInputTokens: z.number().optional(),
  cacheWriteInputTokens: z.number().optional(),
  finishReason: z.string().nullable().optional(),
  toolCallId: z.string().optional(),
  ranOn: z.enum(["server", "client", "mcp"]).optional(),
  mcpServer: z.string().optional(),
  outcome: z.string().optional(),
  iterations: z.number().int().optional(),
  modeVersion: z.number().int().optional(),
  error: z.string().optional(),
  traceId: z.string().optional(),
  spanId: z.string().optional(),
};

/** One step as the timeline answers it: its times as ISO strings, and where it sits on the turn's axis. */
export const TimelineStepView = z.object({
  ...timelineStepFields,
  startedAt: z.string(),
  endedAt: z.string(),
  /** Milliseconds from the timeline's start to the step's. */
  offsetMs: z.number(),
  /** 0 for an instant (a failover, a restart). */
  durationMs: z.number(),
});
export type TimelineStepView = z.infer<typeof TimelineStepView>;

/** How the turn stands: how it ended, or, while it is open, the session's status (running, or waiting). */
export const TimelineStatus = z.enum([...TurnRecord.shape.status.options, ...SessionStatus.exclude(["idle"]).options]);
export type TimelineStatus = z.infer<typeof TimelineStatus>;

export const TurnTimeline = z.object({
  object: z.literal("turn.timeline"),
  sessionId: z.string(),
  turnId: z.string(),
  status: TimelineStatus,
  /** The turn's start (or its first step's, when that came first): every offsetMs counts from here. */
  startedAt: z.string(),
  /** The turn's end (or its last step's, when that came later); null while the turn is open. */
  endedAt: z.string().nullable(),
  /** From startedAt to endedAt; while the turn is open, to now. */
  durationMs: z.number(),
  /** The distinct trace ids of the steps, in the order of the steps (empty when tracing was off). */
  traceIds: z.array(z.string()),
  /** In the order they started; empty for a turn that ran before the timeline was kept. */
  steps: z.array(TimelineStepView),
});
export type TurnTimeline = z.infer<typeof TurnTimeline>;

// What the agent loop does next: every step of a turn (settling the open batch, checking the limits, asking the
// model) answers with one of these, in the spirit of the OpenAI Agents SDK's NextStep, and the loop acts on it.
import type { ModelToolCall } from "../llm/chat-model";
import type { TurnError } from "../wire/turn";
import type { StoredToolCall } from "./agent-tool-call";
import type { CallReservation } from "./model-call-budget";
import type { ModelRequest } from "./model-step";

export type NextStep =
  /** Nothing stops the run: the loop asks the model again. */
  | { type: "next_model_call" }
  /** The model asked for tools: the calls are stored, and those that can run now run; then the batch settles. */
  | {
      type: "run_tools";
      calls: ModelToolCall[];
      /** JSON-format calls: the model's `terminate` flag (the call's result is the answer). */
      terminate: boolean;
      /** The request the model answered: the tools it offered, the registry that runs them, which need approval. */
      request: ModelRequest;
      offered: ReadonlySet<string>;
    }
  /** The open batch waits for a person's decisions: the turn pauses. */
  | { type: "pause_for_approval"; batch: StoredToolCall[] }
  /** The open batch waits for the client's results: the turn pauses. */
  | { type: "pause_for_client"; batch: StoredToolCall[] }
  /** The turn's answer; `appendAnswer` when it is not in the conversation yet (a terminating call's result). */
  | { type: "final_answer"; text: string; appendAnswer: boolean }
  /** The turn ends without an answer: a limit, the model's failure (both logged where found), or cancellation. */
  | { type: "fail"; outcome: "failed" | "cancelled"; error: TurnError };

export const NEXT_MODEL_CALL: NextStep = { type: "next_model_call" };

/** One request's share of a turn: when its working time started, its cancel signal, a model call paid for. */
export interface Run {
  since: number;
  signal?: AbortSignal | undefined;
  /** The first model call of this run was already counted against the key (a new message checks first). */
  prepaid: boolean;
  /** The first model call's reservation, taken before the message was stored. */
  reservation?: CallReservation | undefined;
}

// Questions a tool's MCP server asks the user in the middle of a call (elicitations), for one session object.
// The call waits in place, inside the running turn: the question is logged as a frame, shown in the session's
// state, and answered over REST or the socket; an answer is checked against the schema that asked for it. A
// question nobody answers within the pause TTL, and one whose turn is cancelled, is answered `cancel`.

import { schemaProblem } from "../json-schema-check";
import { quoted } from "../quote";
import { type Refusal, refuse } from "../refusal";
import type { ElicitationRequest } from "../tools/elicitation";
import type { ElicitationAnswer } from "../wire/elicitation";
import type { LoggedFrame } from "../wire/frames";
import type { PendingElicitation } from "../wire/turn";

interface Waiting {
  question: PendingElicitation;
  settle: (answer: ElicitationAnswer) => void;
}

export class ElicitationDesk {
  private waiting: Waiting | null = null;
  private readonly listeners = new Set<(question: PendingElicitation) => void>();

  constructor(
    private readonly emit: (frame: LoggedFrame) => void,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The question waiting for an answer, if any. */
  pending(): PendingElicitation | undefined {
    return this.waiting?.question;
  }

  /** Asks the user; resolves with the answer, or `cancel` when the question expires or `signal` aborts. */
  ask(
    turnId: string,
    request: ElicitationRequest & { toolCallId: string },
    signal: AbortSignal,
  ): Promise<ElicitationAnswer> {
    if (signal.aborted) return Promise.resolve({ action: "cancel" });
    // One question at a time: a server that asks a second while the first waits is told the user declined it.
    if (this.waiting) return Promise.resolve({ action: "decline" });
    const question: PendingElicitation = {
      elicitationId: `elicit_${crypto.randomUUID().replaceAll("-", "")}`,
      toolCallId: request.toolCallId,
      server: request.server,
      tool: request.tool,
      message: request.message,
      requestedSchema: request.requestedSchema,
      expiresAt: new Date(this.now() + this.ttlMs).toISOString(),
    };
    return new Promise<ElicitationAnswer>((resolve) => {
      const settle = (answer: ElicitationAnswer) => {
        if (this.waiting?.question !== question) return;
        this.waiting = null;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.emit({
          type: "elicitation_answered",
          turnId,
          elicitationId: question.elicitationId,
          toolCallId: question.toolCallId,
          action: answer.action,
        });
        resolve(answer);
      };
      const onAbort = () => settle({ action: "cancel" });
      const timer = setTimeout(onAbort, this.ttlMs);
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting = { question, settle };
      this.emit({ type: "elicitation_required", turnId, elicitation: question });
      for (const listener of [...this.listeners]) listener(question);
    });
  }

  /** The next question asked (for a request that waits for its turn to stop or to ask); dispose when done. */
  nextQuestion(): { asked: Promise<PendingElicitation>; dispose: () => void } {
    let listener: (question: PendingElicitation) => void = () => {};
    const asked = new Promise<PendingElicitation>((resolve) => {
      listener = (question) => {
        this.listeners.delete(listener);
        resolve(question);
      };
      this.listeners.add(listener);
    });
    return { asked, dispose: () => this.listeners.delete(listener) };
  }

  /** Gives the answer to the waiting question; a refusal when none waits by that id or the answer does not fit. */
  answer(elicitationId: string, answer: ElicitationAnswer): Refusal | null {
    const waiting = this.waiting;
    if (!waiting || waiting.question.elicitationId !== elicitationId) {
      return refuse(
        "elicitation_not_pending",
        waiting
          ? `No question ${quoted(elicitationId)} is waiting; the waiting one is ${quoted(waiting.question.elicitationId)}.`
          : `No question ${quoted(elicitationId)} is waiting for an answer.`,
        { param: "elicitationId" },
      );
    }
    const problem = checkAnswer(waiting.question, answer);
    if (problem) return refuse("invalid_elicitation_answer", problem.message, { param: problem.param });
    waiting.settle(answer);
    return null;
  }
}

/** An accepted answer carries the fields the schema asks for; a declined or cancelled one carries none. */
function checkAnswer(
  question: PendingElicitation,
  answer: ElicitationAnswer,
): { message: string; param: string } | null {
  if (answer.action !== "accept") {
    return answer.content === undefined
      ? null
      : { message: `An answer that is '${answer.action}' carries no content.`, param: "content" };
  }
  const problem = schemaProblem(question.requestedSchema, answer.content ?? {});
  if (!problem) return null;
  return {
    message: `The answer does not fit what was asked: ${problem.message}.`,
    param: problem.field ? `content.${problem.field}` : "content",
  };
}

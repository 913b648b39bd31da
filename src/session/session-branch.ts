// Branches a person starts (edit an earlier message, regenerate an answer): what a branch copies of its source (the
// conversation before one of the user's own messages), the new session seeded with it, and where it came from.
// The source is never changed; the branch is a session of its own from its first message on.
import { z } from "zod";
import type { NewMessage } from "../agent/turn-store";
import { type Outcome, refuse } from "../refusal";
import type { BranchOrigin, SessionBranchOrigin } from "../wire/session";
import type { SessionStore } from "./session-store";

/** What a branch starts from: its source's mode now and its conversation before the message. */
export interface BranchSeed {
  origin: BranchOrigin;
  mode: string;
  /** The messages before the branch point, in order, as the source stored them (their turns whole). */
  messages: NewMessage[];
}

type Row = Record<string, SqlStorageValue>;

const OriginRow = z.object({ session_id: z.string(), before_seq: z.number().int(), seeded_through: z.number().int() });

/** The seed of a branch before the message `beforeMessage` of `store`'s session, or why there can be none. */
export function branchSeed(store: SessionStore, beforeMessage: number): Outcome<BranchSeed> {
  const { sessionId, mode } = store.identity();
  const message = store.messagesBetween(beforeMessage - 1, beforeMessage + 1, 1)[0];
  if (message?.seq !== beforeMessage) {
    return refuse(
      "invalid_branch_point",
      `Session ${sessionId} has no message ${beforeMessage}: beforeMessage must be the seq of one of the user's own messages.`,
      { param: "beforeMessage" },
    );
  }
  if (message.role !== "user" || message.kind !== "message") {
    const whose = message.role === "user" ? `a ${message.kind} the session wrote` : `the ${message.role}'s`;
    return refuse(
      "invalid_branch_point",
      `Message ${beforeMessage} is ${whose}, not one of the user's own messages: a branch starts before a message the user wrote.`,
      { param: "beforeMessage" },
    );
  }
  const messages = store.messagesBetween(0, beforeMessage, beforeMessage).map((m) => {
    const { seq: _seq, createdAt: _createdAt, ...rest } = m;
    return rest;
  });
  return { ok: true, value: { origin: { sessionId, beforeMessage }, mode, messages } };
}

/** A new session's conversation is its seed (seqs from 1), and its origin is written beside it. */
export function seedBranch(
  storage: DurableObjectStorage,
  store: SessionStore,
  seed: { origin: BranchOrigin; messages: readonly NewMessage[] },
): void {
  storage.transactionSync(() => {
    let seededThrough = 0;
    for (const message of seed.messages) seededThrough = store.appendMessage(message).seq;
    storage.sql.exec(
      "INSERT INTO branch_origin (id, session_id, before_seq, seeded_through) VALUES (1, ?, ?, ?)",
      seed.origin.sessionId,
      seed.origin.beforeMessage,
      seededThrough,
    );
  });
}

/** Where the session branched from; null for a session that is no person's branch. */
export function branchOrigin(sql: SqlStorage): SessionBranchOrigin | null {
  const row = sql
    .exec<Row>("SELECT session_id, before_seq, seeded_through FROM branch_origin WHERE id = 1")
    .toArray()[0];
  if (!row) return null;
  const r = OriginRow.parse(row);
  return { sessionId: r.session_id, beforeMessage: r.before_seq, seededThrough: r.seeded_through };
}

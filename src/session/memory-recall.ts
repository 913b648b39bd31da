// What a turn's prompt reads of its session owner's memories (src/memory): nothing at all when the org or the mode
// has memory off, and then the memory tools are withheld; else recall's pick of the person's memories and their org's,
// from the session's copy of them while it is valid (src/session/memory-copy.ts), else from D1.
import type { MemoryRecallSource } from "../agent/memory-step";
import type { Db } from "../db";
import { MEMORY_TOOL_NAMES, memoryOn } from "../memory/memory-policy";
import { MemoryStore } from "../memory/memory-store";
import type { AgentMode } from "../modes/agent-mode";
import type { AdminLogger } from "../observability/admin-logger";
import { type CopyRead, type MemoryCopy, pickMemories } from "./memory-copy";

/** Whose memories: the session's owner (never the caller's, who may be an org admin acting on it). */
export interface MemoryOwner {
  org: string;
  user: string;
}

/** The owner and the session whose copy a recall may fill. */
export interface CopyOwner extends MemoryOwner {
  sessionId: string;
}

/** Recall for the prompt of a turn of `owner()`'s session (the session's `copy` of the memories, when given, kept filled). */
export function ownerMemoryRecall(
  env: Cloudflare.Env,
  db: Db,
  owner: () => MemoryOwner & { sessionId?: string },
  logger: AdminLogger,
  copy?: MemoryCopy,
  now: () => number = Date.now,
): MemoryRecallSource {
  return async (mode, message, limit) => {
    const { org, user, sessionId } = owner();
    // The policy first (its org flag is kept per isolate): memory off reads no memory at all.
    if (!(await memoryOn(env, db, org, mode))) return { memories: [], withheldTools: MEMORY_TOOL_NAMES };
    const at = now();
    const copied = copy?.recall(message, limit, at);
    if (copied) return { memories: copied, withheldTools: [] };
    try {
      // No valid copy: one D1 batch that reads all the owner's memories and stamps the session's entry, as the list
      // write's does, so what it read is kept as the copy and the session's next turn reads no D1. Someone with more
      // memories than a copy holds (known for the copy's life) is read by recall's own query instead.
      if (copy && sessionId && !copy.overflowing(at)) {
        const read = copy.read(db, org, user, sessionId, new Date(at).toISOString());
        const memories = read.keep(await db.batch(read.statements));
        if (memories) return { memories: pickMemories(memories, message, limit), withheldTools: [] };
      }
      return { memories: await new MemoryStore(db, org, user).recall(message, limit), withheldTools: [] };
    } catch (error) {
      // The person still gets an answer, without what the agent knows of them this once.
      logger.addException("memory_recall_failed", error, [["mode", mode.key]]);
      return { memories: [], withheldTools: [] };
    }
  };
}

/**
 * The read for the session's copy that its list write carries, when memory is on for the session's org and mode
 * (`mode`: the session's mode, as the turn reads it; `at`: the list write's time, ISO); else none, and the copy goes.
 */
export async function ownerCopyRead(
  env: Cloudflare.Env,
  db: Db,
  owner: CopyOwner,
  mode: Pick<AgentMode, "memory"> | null,
  copy: MemoryCopy,
  at: string,
): Promise<CopyRead | null> {
  if (!mode || !(await memoryOn(env, db, owner.org, mode))) {
    copy.drop();
    return null;
  }
  // Someone known to see more memories than a copy holds is read by recall's query each turn: reading them all here
  // too would only learn that again (it is learnt anew once the copy's life ends, or a change drops what was known).
  if (copy.overflowing(Date.parse(at))) return null;
  // A copy read lately serves on as it is (a change would have dropped it): the write carries no read, and the entry's
  // stamp stays that of the read the copy came from, which is what a writer's search goes by.
  if (copy.fresh(Date.parse(at))) return null;
  return copy.readBesideEntry(db, owner.org, owner.user, at);
}

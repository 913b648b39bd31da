// What a turn's prompt reads of its session owner's memories (src/memory): nothing at all when the org or the mode
// has memory off, and then the memory tools are withheld; else recall's pick of the person's memories and their org's,
// from the session's copy of them while it is valid (src/session/memory-copy.ts), else from D1.
import type { MemoryRecallSource } from "../agent/memory-step";
import type { Db } from "../db";
import { MEMORY_TOOL_NAMES, memoryOn } from "../memory/memory-policy";
import { MemoryStore } from "../memory/memory-store";
import type { AgentMode } from "../modes/agent-mode";
import type { AdminLogger } from "../observability/admin-logger";
import type { CopyRead, MemoryCopy } from "./memory-copy";

/** Whose memories: the session's owner (never the caller's, who may be an org admin acting on it). */
export interface MemoryOwner {
  org: string;
  user: string;
}

export function ownerMemoryRecall(
  env: Cloudflare.Env,
  db: Db,
  owner: () => MemoryOwner,
  logger: AdminLogger,
  copy?: MemoryCopy,
  now: () => number = Date.now,
): MemoryRecallSource {
  return async (mode, message, limit) => {
    const { org, user } = owner();
    // The policy first (its org flag is kept per isolate): memory off reads no memory at all.
    if (!(await memoryOn(env, db, org, mode))) return { memories: [], withheldTools: MEMORY_TOOL_NAMES };
    const copied = copy?.recall(message, limit, now());
    if (copied) return { memories: copied, withheldTools: [] };
    // No valid copy: D1, as without one. This read is not kept as the copy: it was not made in a batch that stamped
    // the session's entry, so a change between it and the entry's next write would go unseen.
    try {
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
  owner: MemoryOwner & { sessionId: string },
  mode: Pick<AgentMode, "memory"> | null,
  copy: MemoryCopy,
  at: string,
): Promise<CopyRead | null> {
  if (!mode || !(await memoryOn(env, db, owner.org, mode))) {
    copy.drop();
    return null;
  }
  return copy.read(db, owner.org, owner.user, owner.sessionId, at);
}

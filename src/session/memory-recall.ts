// What a turn's prompt reads of its session owner's memories (src/memory): nothing at all when the org or the mode
// has memory off, and then the memory tools are withheld; else recall's pick of the person's memories and their org's.
import type { MemoryRecallSource } from "../agent/memory-step";
import type { Db } from "../db";
import { MEMORY_TOOL_NAMES, memoryOn } from "../memory/memory-policy";
import { MemoryStore } from "../memory/memory-store";
import type { AdminLogger } from "../observability/admin-logger";

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
): MemoryRecallSource {
  return async (mode, message, limit) => {
    const { org, user } = owner();
    // The policy first (its org flag is kept per isolate): memory off reads no memory at all.
    if (!(await memoryOn(env, db, org, mode))) return { memories: [], withheldTools: MEMORY_TOOL_NAMES };
    try {
      return { memories: await new MemoryStore(db, org, user).recall(message, limit), withheldTools: [] };
    } catch (error) {
      // The person still gets an answer, without what the agent knows of them this once.
      logger.addException("memory_recall_failed", error, [["mode", mode.key]]);
      return { memories: [], withheldTools: [] };
    }
  };
}

// What the memory tools are given (src/tools/memory-*.ts): a way to make the store of the session owner's memories,
// and the org's switch; and the one check each tool makes before it acts, so a tool called in a mode or an org
// whose memory is off refuses (the recall side does not offer it then, but a model may call it anyway).
import type { Db } from "../db";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import { settings } from "../settings";
import { orgMemoryEnabled } from "./memory-policy";
import { MemoryStore } from "./memory-store";

export interface MemoryAccess {
  /** The store of `user`'s memories in `org`, as that person (never as an admin: a tool writes no org memory). */
  store(org: string, user: string): MemoryStore;
  /** The org's switch (PUT /admin/memory). */
  orgEnabled(org: string): Promise<boolean>;
  /** A tool changed `user`'s memories: every session of theirs drops its copy (this one too) before it answers. */
  changed(org: string, user: string): Promise<void>;
}

/**
 * What the session a tool runs in does when the tool changed its owner's memories: drops its own copy and tells the
 * person's other sessions (src/session/memory-notify.ts), before the tool's result goes back.
 */
export interface MemoryToolSession {
  changed: (org: string, user: string) => Promise<void>;
}

/** Memory access over the deployment's D1 (`db`: the reader of the object or request that runs the tool). */
export function memoryAccess(env: Cloudflare.Env, db: Db, session?: MemoryToolSession): MemoryAccess {
  const maxPerUser = settings(env).memory.maxPerUser;
  return {
    store: (org, user) => new MemoryStore(db, org, user, { maxPerUser }),
    orgEnabled: (org) => orgMemoryEnabled(env, db, org),
    changed: async (org, user) => {
      await session?.changed(org, user);
    },
  };
}

export const MEMORY_OFF = {
  org: "Memory is off for this organization.",
  mode: "Memory is off for this mode.",
  unavailable: "Memory is not available here.",
} as const;

/**
 * The store of the context's person when memory is on for its org and mode, else the refusal's message. The tool
 * acts for the session's owner (the context's org and user), never for anyone its arguments name.
 */
export async function memoryForContext(
  access: MemoryAccess | undefined,
  catalog: AgentModeCatalogService,
  context: { org: string; user: string; mode: string },
  signal?: AbortSignal,
): Promise<{ ok: true; store: MemoryStore } | { ok: false; message: string }> {
  if (!access) return { ok: false, message: MEMORY_OFF.unavailable };
  if (!(await access.orgEnabled(context.org))) return { ok: false, message: MEMORY_OFF.org };
  const mode = await catalog.getMode(context.mode, signal);
  if (mode && !mode.memory) return { ok: false, message: MEMORY_OFF.mode };
  return { ok: true, store: access.store(context.org, context.user) };
}

// /context/memories: the caller's memories and their org's, which they can read, add, correct, pin and forget
// (docs/memory.md). Their own are theirs; the org's are read by every member and written by its admins; anyone
// else's is not found (404, the same as none). Nothing is stored while the org's memory is off (409).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import { orgMemoryEnabled } from "../memory/memory-policy";
import { MemoryProblem, MemoryStore } from "../memory/memory-store";
import { quoted } from "../quote";
import { notifyMemoryChange } from "../session/memory-notify";
import { callerOf } from "../session/session-client";
import { settings } from "../settings";
import {
  CreateMemoryBody,
  MemoriesDeleted,
  Memory,
  MemoryListQuery,
  MemoryPage,
  PatchMemoryBody,
} from "../wire/memory";

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["memory"] };
const MemoryId = z.object({ memoryId: z.string().min(1).max(200) });

/** The caller's store: as an admin of their org when they are one (the org's memories are theirs to change). */
export function callerMemories(c: AppContext): MemoryStore {
  const caller = callerOf(c);
  return new MemoryStore(c.get("db"), caller.org, caller.user, {
    admin: caller.admin === true,
    maxPerUser: settings(c.env).memory.maxPerUser,
  });
}

/** The store's refusal as the one OpenAI-shaped error; anything else goes on to the error path. */
export async function answering<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof MemoryProblem) throw new ApiError(error.code, error.message, { param: error.param });
    throw error;
  }
}

/**
 * Every session that may hold a copy of the changed memories drops it: the person's own sessions before the answer
 * goes out; when an org memory changed, the changer's own before it and every other member's just after it
 * (src/session/memory-notify.ts).
 */
async function announce(c: AppContext, scope: "user" | "org"): Promise<void> {
  const caller = callerOf(c);
  await notifyMemoryChange(c.env, c.get("db"), caller.org, scope === "org" ? null : caller.user, c.get("logger"), {
    actor: { user: caller.user, waitUntil: (work) => c.executionCtx.waitUntil(work) },
  });
}

export function memoryNotFound(memoryId: string): ApiError {
  return new ApiError("memory_not_found", `Memory ${quoted(memoryId)} not found.`);
}

/** Refused (409) while the org's memory is off: nothing is stored then. */
async function requireMemoryOn(c: AppContext): Promise<void> {
  if (await orgMemoryEnabled(c.env, c.get("db"), c.get("principal").org)) return;
  throw new ApiError(
    "memory_disabled",
    "Memory is off for your organization: an admin turns it on (PUT /admin/memory). Your memories can still be read and forgotten.",
  );
}

export const memoryRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/context/memories",
      summary:
        "Your memories and your organization's, newest change first (with `q`: those with every word, best first)",
      ...chat,
      request: { query: MemoryListQuery },
      responses: { 200: json(MemoryPage, "A page of memories."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { q, limit, cursor } = c.req.valid("query");
      const page = await answering(
        callerMemories(c).list({
          limit,
          ...(q !== undefined ? { q } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
        }),
      );
      return c.json(page, 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/memories",
      summary: "Adds a memory (a repeat or a correction of one updates it instead)",
      description:
        "`scope: org` (an org admin only) adds a memory every member of the org gets. A text that repeats or " +
        "corrects a memory of the same scope updates that one (docs/memory.md); the answer is the memory either way.",
      ...chat,
      request: jsonBody(CreateMemoryBody, "The fact."),
      responses: {
        201: json(Memory, "The memory."),
        ...errors(400, 401, 403, 409),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      await requireMemoryOn(c);
      const saved = await answering(
        callerMemories(c).save({
          text: body.text,
          source: null,
          ...(body.pinned !== undefined ? { pinned: body.pinned } : {}),
          ...(body.scope !== undefined ? { scope: body.scope } : {}),
        }),
      );
      await announce(c, saved.memory.scope);
      return c.json(saved.memory, 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/memories/{memoryId}",
      summary: "One of your memories, or one of your organization's",
      ...chat,
      request: { params: MemoryId },
      responses: { 200: json(Memory, "The memory."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { memoryId } = c.req.valid("param");
      const memory = await callerMemories(c).get(memoryId);
      if (!memory) throw memoryNotFound(memoryId);
      return c.json(memory, 200);
    },
  )
  .openapi(
    createRoute({
      method: "patch",
      path: "/context/memories/{memoryId}",
      summary: "Corrects or pins one of your memories (an org admin: one of the org's)",
      ...chat,
      request: { params: MemoryId, ...jsonBody(PatchMemoryBody, "What changes.") },
      responses: { 200: json(Memory, "The memory as it now is."), ...errors(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const { memoryId } = c.req.valid("param");
      const body = c.req.valid("json");
      const store = callerMemories(c);
      if (!(await store.get(memoryId))) throw memoryNotFound(memoryId);
      await requireMemoryOn(c);
      const memory = await answering(store.update(memoryId, body));
      if (!memory) throw memoryNotFound(memoryId);
      await announce(c, memory.scope);
      return c.json(memory, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/context/memories/{memoryId}",
      summary: "Forgets one of your memories (an org admin: one of the org's)",
      ...chat,
      request: { params: MemoryId },
      responses: { 204: { description: "Forgotten." }, ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { memoryId } = c.req.valid("param");
      const gone = await answering(callerMemories(c).remove(memoryId));
      if (!gone) throw memoryNotFound(memoryId);
      await announce(c, gone.scope);
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/context/memories",
      summary: "Forgets every memory of yours (never your organization's)",
      ...chat,
      responses: { 200: json(MemoriesDeleted, "How many went."), ...errors(401, 403) },
    }),
    async (c) => {
      const deleted = await callerMemories(c).removeAll();
      await announce(c, "user");
      return c.json({ deleted }, 200);
    },
  );

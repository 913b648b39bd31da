// The A2A door's index of its tasks (the one module with the SQL of a2a_tasks): a task is a turn, kept in its
// session's object; this says which session holds a task id, and whose it is, so a task is found by its id alone and
// a caller's tasks are listed across their contexts. Rows are read through one zod schema.
import { z } from "zod";
import type { Db } from "../db";
import type { Caller } from "../session/caller";
import { mayActOnSession } from "../tenancy/ownership";

const TaskRow = z.object({
  task_id: z.string(),
  org: z.string(),
  user_id: z.string(),
  session_id: z.string(),
  created_at: z.string(),
});

export interface IndexedTask {
  taskId: string;
  sessionId: string;
  org: string;
  user: string;
  createdAt: string;
}

function indexed(row: unknown): IndexedTask {
  const r = TaskRow.parse(row);
  return { taskId: r.task_id, sessionId: r.session_id, org: r.org, user: r.user_id, createdAt: r.created_at };
}

/**
 * Records a task the door started (again for the same task: nothing changes), under its session's owner: an admin who
 * starts a task in a member's context starts it in the member's session, which is the member's (they find, list and
 * cancel it; the admin, as an admin of the org, may too). `task.user` is the starter, taken for a session not listed.
 */
export async function indexTask(db: Db, task: IndexedTask): Promise<void> {
  await db
    .prepare(
      `INSERT OR IGNORE INTO a2a_tasks (task_id, org, user_id, session_id, created_at)
       VALUES (?1, ?2, COALESCE((SELECT user_id FROM session_index WHERE session_id = ?4 AND org = ?2), ?3), ?4, ?5)`,
    )
    .bind(task.taskId, task.org, task.user, task.sessionId, task.createdAt)
    .run();
}

/** The task, when the caller may see it (its owner, or an admin of its org); null for anyone else, as for none. */
export async function findTask(db: Db, caller: Caller, taskId: string): Promise<IndexedTask | null> {
  const row = await db.prepare("SELECT * FROM a2a_tasks WHERE task_id = ?").bind(taskId).first();
  if (!row) return null;
  const task = indexed(row);
  return mayActOnSession(caller, { org: task.org, user: task.user }) ? task : null;
}

export interface TaskPage {
  tasks: IndexedTask[];
  /** The page after this one, or "" for the last. */
  nextPageToken: string;
  totalSize: number;
}

/**
 * The caller's tasks (an admin's: every task of the org), newest first, in one context when `sessionId` is given; a
 * page of `pageSize` from `offset`.
 */
export async function listTasks(
  db: Db,
  caller: Caller,
  query: { sessionId: string | null; pageSize: number; offset: number },
): Promise<TaskPage> {
  const where = ["org = ?"];
  const binds: unknown[] = [caller.org];
  if (!caller.admin) {
    where.push("user_id = ?");
    binds.push(caller.user);
  }
  if (query.sessionId) {
    where.push("session_id = ?");
    binds.push(query.sessionId);
  }
  const clause = where.join(" AND ");
  const [page, count] = await db.batch([
    db
      .prepare(`SELECT * FROM a2a_tasks WHERE ${clause} ORDER BY created_at DESC, task_id DESC LIMIT ? OFFSET ?`)
      .bind(...binds, query.pageSize, query.offset),
    db.prepare(`SELECT COUNT(*) AS n FROM a2a_tasks WHERE ${clause}`).bind(...binds),
  ]);
  const tasks = (page?.results ?? []).map(indexed);
  const totalSize = z.object({ n: z.number() }).parse(count?.results[0]).n;
  const next = query.offset + tasks.length;
  return { tasks, totalSize, nextPageToken: next < totalSize ? String(next) : "" };
}

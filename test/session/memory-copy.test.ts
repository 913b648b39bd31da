// The session's copy of its owner's memories (src/session/memory-copy.ts): a warm session's turn reads no D1 for
// recall, and a memory changed or forgotten anywhere (the routes, another session's tool, an org admin) is out of the
// very next prompt of the person's sessions; a copy past its life is not used; a person with more memories than a
// copy holds is read from D1 every turn.
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { hashApiKey } from "../../src/auth/api-keys";
import { MemoryStore } from "../../src/memory/memory-store";
import { D1AgentModeCatalogService } from "../../src/modes/catalog-service";
import { MEMORY_SECTION_HEADING } from "../../src/prompts/memory-section";
import type { AgentSession } from "../../src/session/agent-session";
import { MEMORY_CACHE_TTL_MS, MEMORY_COPY_MAX } from "../../src/session/memory-copy";
import { notifyMemoryChange } from "../../src/session/memory-notify";
import { ownerMemoryRecall } from "../../src/session/memory-recall";
import { sessionsHoldingCopySince } from "../../src/session/session-index";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { authHeaders } from "../fixtures/keys";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { call } from "../fixtures/sessions";
import { scriptUpstream, type UpstreamScript } from "../fixtures/upstream";

type Sent = { messages: { role: string; content: string }[] };

const ORG = "org-copy";

/** A person of ORG (or `org`) with a key of their own; each test its own people. */
async function person(user: string, scopes: string[] = ["chat"], org = ORG): Promise<string> {
  const key = `test-copy-key-${user}`;
  await env.DB.prepare("INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(`copy_${user}`, await hashApiKey(key), user, org, user, JSON.stringify(scopes))
    .run();
  return key;
}

async function ok(method: string, path: string, key: string, body?: unknown): Promise<unknown> {
  const { status, json } = await call(method, path, body, key);
  if (status >= 300) throw new Error(`${method} ${path} answered ${status}: ${JSON.stringify(json)}`);
  return json;
}

type Steps = Parameters<typeof scriptUpstream>[0];
const OK_STEP: Steps = [{ type: "completion", content: "OK." }];

/** A session of `key`'s person with its own script on the upstream (a script's marker stays in the history). */
interface Conversation {
  key: string;
  sessionId: string;
  script: UpstreamScript;
}

async function newSession(key: string, mode?: string): Promise<Conversation> {
  const { sessionId } = (await ok("POST", "/context/sessions", key, mode ? { mode } : {})) as { sessionId: string };
  return { key, sessionId, script: await scriptUpstream([]) };
}

const inSession = <T>(sessionId: string, work: (instance: AgentSession) => Promise<T>) =>
  runInDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId)), work);

/** One turn in the session; its list writes (and so the copy they fill) are done when it returns. */
async function turn(
  conversation: Conversation,
  content: string,
  steps: Steps = OK_STEP,
): Promise<{ response: AgentExecuteResponse; section: string }> {
  const { key, sessionId, script } = conversation;
  const before = (await script.requests()).length;
  await script.append(steps);
  const response = (await ok("POST", `/context/sessions/${sessionId}/messages`, key, {
    content: `${content} ${script.marker}`,
  })) as AgentExecuteResponse;
  await inSession(sessionId, (instance) => instance.list.settled());
  const system = ((await script.bodies()) as Sent[])[before]?.messages[0]?.content ?? "";
  const at = system.indexOf(MEMORY_SECTION_HEADING);
  return { response, section: at < 0 ? "" : system.slice(at) };
}

const setText = (id: string, text: string) =>
  env.DB.prepare("UPDATE memories SET text = ? WHERE id = ?").bind(text, id).run();

describe("the session's copy of its owner's memories", () => {
  it("serves a warm session's next turn from its copy with no D1 read: a row changed unannounced still shows until the session is told", async () => {
    const key = await person("kim");
    const { memory } = await new MemoryStore(env.DB, ORG, "kim").save({ text: "Kim sits on floor 3.", source: null });
    const session = await newSession(key);
    expect((await turn(session, "Where do I sit?")).section).toContain("floor 3");

    await setText(memory.id, "Kim sits on floor 9.");
    expect((await turn(session, "Where do I sit?")).section).toContain("floor 3");

    // That turn's list write read the row anew; changed again, and announced this time, it is in the next prompt.
    await setText(memory.id, "Kim sits on floor 12.");
    await notifyMemoryChange(env, env.DB, ORG, "kim", new RecordingAdminLogger());
    expect((await turn(session, "Where do I sit?")).section).toContain("floor 12");
  });

  it("leaves out of the same warm session's next prompt a memory deleted, corrected or all forgotten by the routes", async () => {
    const key = await person("lou");
    const store = new MemoryStore(env.DB, ORG, "lou");
    const { memory: gone } = await store.save({ text: "Lou drives a red van.", source: null });
    const { memory: fixed } = await store.save({ text: "Lou's cat is called Miso.", source: null });
    const session = await newSession(key);
    const first = await turn(session, "Tell me about me.");
    expect([first.section.includes(gone.id), first.section.includes(fixed.id)]).toEqual([true, true]);

    const deleted = await exports.default.fetch(`http://aptix.test/context/memories/${gone.id}`, {
      method: "DELETE",
      headers: authHeaders(key),
    });
    expect(deleted.status).toBe(204);
    await ok("PATCH", `/context/memories/${fixed.id}`, key, { text: "Lou's cat is called Tofu." });
    const second = await turn(session, "Tell me about me.");
    expect(second.section.includes(gone.id)).toBe(false);
    expect(second.section).toContain(`- [${fixed.id}] Lou's cat is called Tofu.`);

    expect(await ok("DELETE", "/context/memories", key)).toEqual({ deleted: 1 });
    expect((await turn(session, "Tell me about me.")).section).toBe("");
  });

  it("shows a memory saved by the tool in another session in a warm session's next prompt, and forgotten there, no longer", async () => {
    const key = await person("max", ["chat", "admin"]);
    await ok("PUT", "/admin/modes/copy_both", key, {
      displayName: "Both",
      description: "Saves and forgets.",
      systemPrompt: "Help.",
      tools: ["memory_save", "memory_forget"],
    });
    await new MemoryStore(env.DB, ORG, "max").save({ text: "Max plays the cello.", source: null });
    const warm = await newSession(key, "copy_both");
    await turn(warm, "Hello.");
    const other = await newSession(key, "copy_both");

    const saved = await turn(other, "Remember I live in Porto.", [
      {
        type: "completion",
        toolCalls: [{ name: "memory_save", arguments: JSON.stringify({ text: "Max lives in Porto." }) }],
      },
      { type: "completion", content: "Saved." },
    ]);
    const id = (JSON.parse(saved.response.toolCalls[0]?.resultJson ?? "{}") as { memory: { id: string } }).memory.id;
    expect((await turn(warm, "Where do I live?")).section).toContain(`- [${id}] Max lives in Porto.`);

    await turn(other, "Forget where I live.", [
      { type: "completion", toolCalls: [{ name: "memory_forget", arguments: JSON.stringify({ id }) }] },
      { type: "completion", content: "Forgotten." },
    ]);
    const after = await turn(warm, "Where do I live?");
    expect([after.section.includes(id), after.section.includes("cello")]).toEqual([false, true]);
  });

  it("shows an org memory an admin adds in another member's warm session's next prompt, once the answer's after-work is done", async () => {
    // An org of their own: its memory reaches every member.
    const admin = await person("nia", ["chat", "admin"], "org-copy-b");
    const member = await person("oto", ["chat"], "org-copy-b");
    await new MemoryStore(env.DB, "org-copy-b", "oto").save({ text: "Oto writes Go.", source: null });
    const session = await newSession(member);
    await turn(session, "Hello.");

    const ctx = createExecutionContext();
    const response = await createApp().fetch(
      new Request("http://aptix.test/context/memories", {
        method: "POST",
        headers: { ...authHeaders(admin), "content-type": "application/json" },
        body: JSON.stringify({ text: "The office shuts at 6pm.", scope: "org" }),
      }),
      env,
      ctx,
    );
    const added = (await response.json()) as { id: string };
    await waitOnExecutionContext(ctx);
    expect((await turn(session, "When do we close?")).section).toContain(`- [${added.id}] (the organization's)`);
  });

  it("tells the changer's own sessions of an org-wide change before returning, and every other member's in the work it leaves to waitUntil", async () => {
    const admin = await person("ria", ["chat", "admin"], "org-copy-c");
    const member = await person("sol", ["chat"], "org-copy-c");
    const own = await newSession(admin);
    const theirs = await newSession(member);
    await turn(own, "Hello.");
    await turn(theirs, "Hello.");
    const held = (conversation: Conversation) =>
      inSession(conversation.sessionId, async (instance) => instance.memoryCopy.refreshedAt() !== null);
    expect([await held(own), await held(theirs)]).toEqual([true, true]);

    const left: Promise<unknown>[] = [];
    await notifyMemoryChange(env, env.DB, "org-copy-c", null, new RecordingAdminLogger(), {
      actor: { user: "ria", waitUntil: (work) => left.push(work) },
    });
    // The other member's telling runs beside the answer (it may be done already): it is what was left to waitUntil.
    expect([await held(own), left.length]).toEqual([false, 1]);
    await Promise.all(left);
    expect(await held(theirs)).toBe(false);
  });

  it("finds to tell only the sessions that read a copy: each made in a mode with memory on, from its creation, not one with memory off", async () => {
    const key = await person("tam", ["chat", "admin"], "org-copy-d");
    await ok("PUT", "/admin/modes/copy_off", key, {
      displayName: "No memory",
      description: "Keeps nothing.",
      systemPrompt: "Help.",
      tools: [],
      memory: false,
    });
    const copying = await newSession(key);
    const fresh = await newSession(key); // no turn yet: its copy was read with its index row
    const off = await newSession(key, "copy_off");
    await turn(copying, "Hello.");
    await turn(off, "Hello.");

    const found = await sessionsHoldingCopySince(env.DB, "org-copy-d", null, "1970-01-01T00:00:00.000Z", 10);
    expect(found.map((s) => s.sessionId).sort()).toEqual([copying.sessionId, fresh.sessionId].sort());
  });

  it("reads a new session's copy with its index row, so its first turn reads no D1 for recall", async () => {
    const key = await person("una");
    const { memory } = await new MemoryStore(env.DB, ORG, "una").save({ text: "Una plays the oboe.", source: null });
    const session = await newSession(key);
    // Changed unannounced after the creation: a first turn that read D1 would show the change.
    await setText(memory.id, "Una plays the cello.");

    const held = await inSession(session.sessionId, async (instance) => instance.memoryCopy.refreshedAt());
    expect([held !== null, (await turn(session, "What do I play?")).section]).toEqual([
      true,
      expect.stringContaining("Una plays the oboe."),
    ]);
  });

  it("does not use a copy once MEMORY_CACHE_TTL_MS has passed since it was read: recall reads D1 then", async () => {
    const key = await person("pia");
    const { memory } = await new MemoryStore(env.DB, ORG, "pia").save({ text: "Pia bikes to work.", source: null });
    const session = await newSession(key);
    await turn(session, "How do I commute?");
    await setText(memory.id, "Pia takes the tram to work.");
    const mode = await new D1AgentModeCatalogService(env.DB, ORG).getMode("general");
    if (!mode) throw new Error("no general mode");

    const texts = await inSession(session.sessionId, async (instance) => {
      const refreshedAt = instance.memoryCopy.refreshedAt() ?? 0;
      const recallAt = async (now: number) => {
        const source = ownerMemoryRecall(
          env,
          env.DB,
          () => ({ org: ORG, user: "pia" }),
          new RecordingAdminLogger(),
          instance.memoryCopy,
          () => now,
        );
        return (await source(mode, "commute", 10)).memories.map((m) => m.text);
      };
      return [await recallAt(refreshedAt + MEMORY_CACHE_TTL_MS - 1), await recallAt(refreshedAt + MEMORY_CACHE_TTL_MS)];
    });
    expect(texts).toEqual([["Pia bikes to work."], ["Pia takes the tram to work."]]);
  });

  it("keeps the first turn's read as the copy, stamped on the session's entry, so the next turn reads no D1 even before a list write", async () => {
    const key = await person("ray");
    const { memory } = await new MemoryStore(env.DB, ORG, "ray").save({ text: "Ray codes in Rust.", source: null });
    const { sessionId } = await newSession(key);
    const mode = await new D1AgentModeCatalogService(env.DB, ORG).getMode("general");
    if (!mode) throw new Error("no general mode");
    // Later than the creation's read, whose stamp the entry already has (a stamp never moves back).
    const at = Date.now() + 60_000;

    const texts = await inSession(sessionId, async (instance) => {
      // The copy read with the session's index row goes: this is the turn that finds none.
      instance.memoryCopy.drop();
      const source = ownerMemoryRecall(
        env,
        env.DB,
        () => ({ org: ORG, user: "ray", sessionId }),
        new RecordingAdminLogger(),
        instance.memoryCopy,
        () => at,
      );
      const first = (await source(mode, "language", 10)).memories.map((m) => m.text);
      await setText(memory.id, "Ray codes in Zig.");
      const second = (await source(mode, "language", 10)).memories.map((m) => m.text);
      return [first, second, instance.memoryCopy.refreshedAt()];
    });
    expect(texts).toEqual([["Ray codes in Rust."], ["Ray codes in Rust."], at]);
    const stamp = await env.DB.prepare("SELECT memory_copy_at FROM session_index WHERE session_id = ?")
      .bind(sessionId)
      .first("memory_copy_at");
    expect(stamp).toBe(new Date(at).toISOString());
  });

  it("keeps no copy for a person with more memories than a copy holds: every turn reads D1", async () => {
    const key = await person("quy");
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO memories (id, org, user_id, scope, text, pinned, created_by, created_at, updated_at)
       SELECT 'mem_' || printf('%032x', i), ?2, 'quy', 'user', 'Quy fact ' || i, i = 1, 'quy',
         '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM n`,
    )
      .bind(MEMORY_COPY_MAX + 1, ORG)
      .run();
    const session = await newSession(key);
    await turn(session, "Facts?");
    expect(await inSession(session.sessionId, async (instance) => instance.memoryCopy.refreshedAt())).toBeNull();

    await setText(`mem_${(1).toString(16).padStart(32, "0")}`, "Quy fact one, changed.");
    expect((await turn(session, "Facts?")).section).toContain("Quy fact one, changed.");
  });
});

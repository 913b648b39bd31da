// People, not only keys: the user row each caller's user gets, /admin/users and disabling a user, usage by user,
// and the console's browser session cookie (its CSRF token, sign-out, its idle end).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/auth/api-keys";
import { createBrowserSession } from "../../src/auth/browser-sessions";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { workerWith } from "../passthrough/harness";

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}
interface UserView {
  id: string;
  email: string | null;
  name: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
  lastSeenVia: string | null;
  disabled: boolean;
}
interface Me {
  user: { id: string; email: string | null; name: string | null };
  org: string;
  scopes: string[];
  via: string;
  session: { id: string; expiresAt: string | null; csrfToken: string } | null;
}

const LIFETIME = { lifetimeMs: 3_600_000, idleMs: 600_000 };

/** A name no other test of this file uses (they share one database). */
const someone = () => `person-${crypto.randomUUID().slice(0, 8)}`;

/** A chat key of its own user, stored hashed like a real one. */
async function keyOfNewUser(org = "org-a"): Promise<{ key: string; user: string }> {
  const user = someone();
  const key = `sk-users-${crypto.randomUUID()}`;
  await env.DB.prepare("INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(`key-${user}`, await hashApiKey(key), user, org, user, '["chat"]')
    .run();
  return { key, user };
}

async function signedIn(user = someone(), scopes: string[] = ["chat"], org = "org-a", now = Date.now()) {
  const session = await createBrowserSession(env.DB, { org, user, scopes, via: "browser_session" }, LIFETIME, now);
  return { ...session, user, cookie: `__Host-aptix_session=${session.secret}` };
}

async function usersOf(worker: ReturnType<typeof workerWith>, key: string = TEST_KEYS.admin.key) {
  const response = await worker.fetch("http://aptix.test/admin/users", { headers: authHeaders(key) });
  return ((await response.json()) as { users: UserView[] }).users;
}

describe("users", () => {
  it("records an API key's user as seen, by key, and lists them for an admin of the org", async () => {
    const worker = workerWith();
    await worker.fetch("http://aptix.test/modes", { headers: authHeaders(TEST_KEYS.chat.key) });
    await worker.settled();
    const users = await usersOf(worker);
    expect(users.find((u) => u.id === TEST_KEYS.chat.user)).toMatchObject({ lastSeenVia: "api_key", disabled: false });
  });

  it("lists no user of another org", async () => {
    const worker = workerWith();
    await worker.fetch("http://aptix.test/modes", { headers: authHeaders(TEST_KEYS.otherOrg.key) });
    await worker.settled();
    const users = await usersOf(worker);
    expect(users.map((u) => u.id)).not.toContain(TEST_KEYS.otherOrg.user);
  });

  it("refuses the API key of a disabled user with user_disabled", async () => {
    const worker = workerWith();
    const { key, user } = await keyOfNewUser();
    await worker.fetch("http://aptix.test/modes", { headers: authHeaders(key) });
    await worker.settled();
    const disable = await worker.fetch(`http://aptix.test/admin/users/${user}`, {
      method: "PATCH",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: JSON.stringify({ disabled: true }),
    });
    expect(((await disable.json()) as { user: UserView }).user.disabled).toBe(true);
    const refused = await worker.fetch("http://aptix.test/modes", { headers: authHeaders(key) });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("user_disabled");
  });

  it("lets a user enabled again back in", async () => {
    const worker = workerWith();
    const { key, user } = await keyOfNewUser();
    await worker.fetch("http://aptix.test/modes", { headers: authHeaders(key) });
    await worker.settled();
    const change = (disabled: boolean) =>
      worker.fetch(`http://aptix.test/admin/users/${user}`, {
        method: "PATCH",
        headers: { ...authHeaders(), "content-type": "application/json" },
        body: JSON.stringify({ disabled }),
      });
    await change(true);
    await change(false);
    const response = await worker.fetch("http://aptix.test/modes", { headers: authHeaders(key) });
    expect(response.status).toBe(200);
  });

  it("ends a disabled user's browser sessions at once", async () => {
    const worker = workerWith();
    const { cookie, user } = await signedIn();
    const before = await worker.fetch("http://aptix.test/auth/me", { headers: { cookie } });
    expect(before.status).toBe(200);
    await worker.settled();
    await worker.fetch(`http://aptix.test/admin/users/${user}`, {
      method: "PATCH",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: JSON.stringify({ disabled: true }),
    });
    const after = await worker.fetch("http://aptix.test/auth/me", { headers: { cookie } });
    expect(after.status).toBe(403);
    expect(((await after.json()) as ErrorBody).error.code).toBe("user_disabled");
  });

  it("refuses an admin disabling themselves, and changes nothing", async () => {
    const worker = workerWith();
    await worker.fetch("http://aptix.test/modes", { headers: authHeaders() });
    await worker.settled();
    const response = await worker.fetch(`http://aptix.test/admin/users/${TEST_KEYS.admin.user}`, {
      method: "PATCH",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: JSON.stringify({ disabled: true }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.param).toBe("disabled");
    expect((await usersOf(worker)).find((u) => u.id === TEST_KEYS.admin.user)?.disabled).toBe(false);
  });

  it("answers user_not_found for a user of another org", async () => {
    const worker = workerWith();
    await worker.fetch("http://aptix.test/modes", { headers: authHeaders(TEST_KEYS.otherOrg.key) });
    await worker.settled();
    const response = await worker.fetch(`http://aptix.test/admin/users/${TEST_KEYS.otherOrg.user}`, {
      method: "PATCH",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: JSON.stringify({ disabled: true }),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("user_not_found");
  });

  it("sums usage by user", async () => {
    await env.DB.prepare(
      `INSERT INTO usage_records (id, org, key_id, user_id, endpoint, model, prompt_tokens, completion_tokens, total_tokens)
       VALUES ('u1', 'org-a', 'k1', 'dana', 'chat', 'demo', 10, 5, 15), ('u2', 'org-a', 'bs_x', 'dana', 'chat', 'demo', 1, 1, 2),
              ('u3', 'org-a', 'k2', 'erin', 'chat', 'demo', 3, 3, 6)`,
    ).run();
    const worker = workerWith();
    const response = await worker.fetch("http://aptix.test/admin/usage?groupBy=user", { headers: authHeaders() });
    const { rows } = (await response.json()) as { rows: { group: string; totalTokens: number; calls: number }[] };
    expect(rows.map((r) => [r.group, r.calls, r.totalTokens])).toEqual([
      ["dana", 2, 17],
      ["erin", 1, 6],
    ]);
  });
});

describe("browser sessions", () => {
  it("authenticate /auth/me by cookie, saying who and how, with the session's CSRF token", async () => {
    const worker = workerWith();
    const { cookie, id, user } = await signedIn(someone(), ["chat", "admin"]);
    const response = await worker.fetch("http://aptix.test/auth/me", { headers: { cookie } });
    const me = (await response.json()) as Me;
    expect(me).toMatchObject({ user: { id: user }, org: "org-a", scopes: ["chat", "admin"], via: "browser_session" });
    expect(me.session?.id).toBe(id);
    expect(me.session?.csrfToken).toMatch(/^[0-9a-f]{43}$/);
  });

  it("say how a key's caller came in, with no session", async () => {
    const worker = workerWith();
    const response = await worker.fetch("http://aptix.test/auth/me", { headers: authHeaders(TEST_KEYS.chat.key) });
    expect(await response.json()).toMatchObject({ user: { id: "bob" }, via: "api_key", session: null });
  });

  it("refuse a state-changing request by cookie without the CSRF token, creating nothing", async () => {
    const worker = workerWith();
    const { cookie, user } = await signedIn();
    const response = await worker.fetch("http://aptix.test/context/sessions", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as ErrorBody).error.code).toBe("csrf_token_mismatch");
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM session_index WHERE user_id = ?")
      .bind(user)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });

  it("refuse a state-changing request by cookie with another session's CSRF token", async () => {
    const worker = workerWith();
    const mine = await signedIn();
    const other = await signedIn();
    const otherMe = (await (
      await worker.fetch("http://aptix.test/auth/me", { headers: { cookie: other.cookie } })
    ).json()) as Me;
    const response = await worker.fetch("http://aptix.test/context/sessions", {
      method: "POST",
      headers: {
        cookie: mine.cookie,
        "content-type": "application/json",
        "x-csrf-token": otherMe.session?.csrfToken ?? "",
      },
      body: "{}",
    });
    expect(((await response.json()) as ErrorBody).error.code).toBe("csrf_token_mismatch");
  });

  it("take a state-changing request by cookie with its CSRF token, as the signed-in user", async () => {
    const worker = workerWith();
    const { cookie, user } = await signedIn();
    const me = (await (await worker.fetch("http://aptix.test/auth/me", { headers: { cookie } })).json()) as Me;
    const response = await worker.fetch("http://aptix.test/context/sessions", {
      method: "POST",
      headers: { cookie, "content-type": "application/json", "x-csrf-token": me.session?.csrfToken ?? "" },
      body: "{}",
    });
    expect(response.status).toBe(201);
    const { sessionId } = (await response.json()) as { sessionId: string };
    const row = await env.DB.prepare("SELECT user_id FROM session_index WHERE session_id = ?")
      .bind(sessionId)
      .first<{ user_id: string }>();
    expect(row?.user_id).toBe(user);
  });

  it("end server-side at sign-out: the same cookie is refused afterwards", async () => {
    const worker = workerWith();
    const { cookie } = await signedIn();
    const me = (await (await worker.fetch("http://aptix.test/auth/me", { headers: { cookie } })).json()) as Me;
    const out = await worker.fetch("http://aptix.test/auth/logout", {
      method: "POST",
      headers: { cookie, "x-csrf-token": me.session?.csrfToken ?? "" },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("__Host-aptix_session=;");
    const after = await worker.fetch("http://aptix.test/auth/me", { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as ErrorBody).error.code).toBe("sign_in_expired");
  });

  it("end after their idle time without a request", async () => {
    const worker = workerWith();
    const { cookie } = await signedIn(someone(), ["chat"], "org-a", Date.now() - LIFETIME.idleMs - 1_000);
    const response = await worker.fetch("http://aptix.test/auth/me", { headers: { cookie } });
    expect(((await response.json()) as ErrorBody).error.code).toBe("sign_in_expired");
  });

  it("refuse a cookie that names no session", async () => {
    const worker = workerWith();
    const response = await worker.fetch("http://aptix.test/auth/me", {
      headers: { cookie: "__Host-aptix_session=made-up" },
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as ErrorBody).error.code).toBe("sign_in_expired");
  });

  it("give a session of another org no sight of this org's sessions", async () => {
    const worker = workerWith();
    const created = await worker.fetch("http://aptix.test/context/sessions", {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json" },
      body: "{}",
    });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const { cookie } = await signedIn(someone(), ["chat"], "org-b");
    const response = await worker.fetch(`http://aptix.test/context/sessions/${sessionId}`, { headers: { cookie } });
    expect(response.status).toBe(404);
  });
});

describe("sign-in without an identity provider", () => {
  it("offers API keys only", async () => {
    const response = await workerWith().fetch("http://aptix.test/auth/providers");
    expect(await response.json()).toEqual({ singleSignOn: null, apiKey: true });
  });

  it("answers /auth/login with sign_in_not_configured", async () => {
    const response = await workerWith().fetch("http://aptix.test/auth/login");
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("sign_in_not_configured");
  });
});

describe("a browser signed in with an API key", () => {
  async function signInWithKey(worker: ReturnType<typeof workerWith>, key: string) {
    const response = await worker.fetch("https://aptix.test/auth/session", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ api_key: key, return_to: "/" }),
      redirect: "manual",
    });
    const line = response.headers.getSetCookie().find((c) => c.startsWith("__Host-aptix_session=")) ?? "";
    return { response, cookie: line.split(";")[0] ?? "" };
  }

  it("is signed out when the key is revoked", async () => {
    const worker = workerWith();
    const { key } = await keyOfNewUser();
    const { cookie } = await signInWithKey(worker, key);
    expect((await worker.fetch("https://aptix.test/auth/me", { headers: { cookie } })).status).toBe(200);
    await worker.fetch(`https://aptix.test/admin/keys/key-${(await usersKeyId(key)) ?? ""}`, {
      method: "DELETE",
      headers: authHeaders(),
    });
    const after = await worker.fetch("https://aptix.test/auth/me", { headers: { cookie } });
    expect(((await after.json()) as ErrorBody).error.code).toBe("sign_in_expired");
  });

  it("never outlives the key's expiry", async () => {
    const worker = workerWith();
    const { key, user } = await keyOfNewUser();
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE user_id = ?").bind(expires, user).run();
    const { cookie } = await signInWithKey(worker, key);
    const me = (await (await worker.fetch("https://aptix.test/auth/me", { headers: { cookie } })).json()) as Me;
    expect(me.session?.expiresAt).toBe(expires);
  });

  it("is refused from a page of another origin, even a listed one (login CSRF)", async () => {
    const worker = workerWith({ CORS_ALLOWED_ORIGINS: "https://chat.example.com" } as Partial<Cloudflare.Env>);
    const response = await worker.fetch("https://aptix.test/auth/session", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://chat.example.com" },
      body: new URLSearchParams({ api_key: TEST_KEYS.chat.key }),
      redirect: "manual",
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as ErrorBody).error.code).toBe("origin_not_allowed");
    expect(response.headers.getSetCookie().some((c) => c.startsWith("__Host-aptix_session="))).toBe(false);
  });

  it("ends the earlier session of the same browser when it signs in again", async () => {
    const worker = workerWith();
    const first = await signInWithKey(worker, TEST_KEYS.chat.key);
    const again = await worker.fetch("https://aptix.test/auth/session", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: first.cookie },
      body: new URLSearchParams({ api_key: TEST_KEYS.chat.key }),
      redirect: "manual",
    });
    expect(again.status).toBe(302);
    const old = await worker.fetch("https://aptix.test/auth/me", { headers: { cookie: first.cookie } });
    expect(old.status).toBe(401);
  });

  it("signs out with the cookie even when the request also carries a key", async () => {
    const worker = workerWith();
    const { cookie } = await signInWithKey(worker, TEST_KEYS.chat.key);
    const out = await worker.fetch("https://aptix.test/auth/logout", {
      method: "POST",
      headers: { cookie, ...authHeaders(TEST_KEYS.chat.key) },
    });
    expect(out.status).toBe(204);
    expect((await worker.fetch("https://aptix.test/auth/me", { headers: { cookie } })).status).toBe(401);
  });
});

/** The id of the key whose secret is `key` (keyOfNewUser names it key-<user>). */
async function usersKeyId(key: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT user_id FROM api_keys WHERE key_hash = ?")
    .bind(await hashApiKey(key))
    .first<{ user_id: string }>();
  return row?.user_id ?? null;
}

describe("GET /auth/session", () => {
  it("says a browser without a session is not signed in, with a 200", async () => {
    const response = await workerWith().fetch("http://aptix.test/auth/session");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ signedIn: false, csrfToken: null });
  });

  it("gives a signed-in browser its user and CSRF token", async () => {
    const { cookie, user } = await signedIn();
    const response = await workerWith().fetch("http://aptix.test/auth/session", { headers: { cookie } });
    const session = (await response.json()) as { signedIn: boolean; user: string; csrfToken: string };
    expect(session).toMatchObject({ signedIn: true, user });
    expect(session.csrfToken).toMatch(/^[0-9a-f]{43}$/);
  });
});

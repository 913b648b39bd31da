// An operator is an operator's to change: an admin of the same org disables none, whether they act by key or signed
// in by single sign-on (an OIDC_OPERATOR_GROUPS member has no key), and makes no key that acts as one.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createBrowserSession } from "../../src/auth/browser-sessions";
import { freshDatabase } from "../fixtures/database";
import { TEST_KEYS } from "../fixtures/keys";
import { ADMIN_A, OPERATOR, outcome } from "./fixtures";

beforeEach(freshDatabase);

const LIFETIME = { lifetimeMs: 3_600_000, idleMs: 3_600_000 };

describe("an operator", () => {
  it("acting by key is not disabled by an admin of the org (403), but by an operator", async () => {
    const path = `/admin/users/${TEST_KEYS.operator.user}`;
    expect(await outcome("PATCH", path, { disabled: true }, ADMIN_A)).toMatchObject({
      status: 403,
      code: "insufficient_scope",
    });
    const other = await env.DB.prepare("SELECT disabled_at FROM users WHERE org = 'org-a' AND id = 'olga'").first();
    expect(other?.disabled_at ?? null).toBeNull();
  });

  it("signed in by single sign-on (no key of theirs) is not disabled by an admin of the org (403)", async () => {
    await createBrowserSession(
      env.DB,
      { org: "org-a", user: "sso-operator", scopes: ["chat", "admin", "operator"], via: "browser_session" },
      LIFETIME,
    );
    await env.DB.prepare("INSERT INTO users (org, id) VALUES ('org-a', 'sso-operator')").run();
    expect(await outcome("PATCH", "/admin/users/sso-operator", { disabled: true }, ADMIN_A)).toMatchObject({
      status: 403,
      code: "insufficient_scope",
    });
    expect((await outcome("PATCH", "/admin/users/sso-operator", { disabled: true }, OPERATOR)).status).toBe(200);
  });

  it("gets no key an admin makes to act as them (403); an operator may make one", async () => {
    const body = { name: "as the operator", user: TEST_KEYS.operator.user, scopes: ["chat"] };
    expect(await outcome("POST", "/admin/keys", body, ADMIN_A)).toMatchObject({
      status: 403,
      code: "insufficient_scope",
    });
    expect((await outcome("POST", "/admin/keys", body, OPERATOR)).status).toBe(201);
  });

  it("is made by an operator only: an admin gives no key the operator scope (403)", async () => {
    const body = { name: "escalated", scopes: ["chat", "admin", "operator"] };
    expect(await outcome("POST", "/admin/keys", body, ADMIN_A)).toMatchObject({
      status: 403,
      code: "insufficient_scope",
    });
  });
});

// An org's provider keys (/admin/secrets): stored encrypted at rest, write-only (names, last four characters and
// dates; never a value), the org's own (another org sees none of them), named by the org's routes, removed only
// when nothing names them, and kept through a rotation of SECRETS_KEY.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { freshDatabase } from "../fixtures/database";
import { authHeaders } from "../fixtures/keys";
import { TEST_SECRETS_KEY } from "../fixtures/secrets-key";
import { call } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { workerWith } from "../passthrough/harness";
import { ADMIN_A, ADMIN_B, MEMBER_A, OPERATOR, orgRouteToUpstreamB, outcome, storeSecret } from "./fixtures";

beforeEach(freshDatabase);

const VALUE = "sk-org-a-provider-key-0123456789";

async function secretsOf(key: string): Promise<{ name: string; lastFour: string }[]> {
  const { json } = await call("GET", "/admin/secrets", undefined, key);
  return (json as { secrets: { name: string; lastFour: string }[] }).secrets;
}

describe("PUT /admin/secrets/:name", () => {
  it("stores a key (201), replaces it (200), and never answers its value", async () => {
    const stored = await call("PUT", "/admin/secrets/OPENAI_KEY", { value: VALUE }, ADMIN_A);
    expect(stored.status).toBe(201);
    expect(stored.json).toMatchObject({ secret: { name: "OPENAI_KEY", lastFour: "6789" } });
    const replaced = await call("PUT", "/admin/secrets/OPENAI_KEY", { value: `${VALUE}x` }, ADMIN_A);
    expect(replaced.status).toBe(200);
    const listed = await call("GET", "/admin/secrets", undefined, ADMIN_A);
    expect(listed.json).toMatchObject({ secrets: [{ name: "OPENAI_KEY", lastFour: "789x" }] });
    expect(JSON.stringify([stored.json, replaced.json, listed.json])).not.toContain(VALUE);
  });

  it("keeps only ciphertext at rest: no column of the row holds the value", async () => {
    await storeSecret(ADMIN_A, "OPENAI_KEY", VALUE);
    const row = await env.DB.prepare("SELECT * FROM org_secrets WHERE org = 'org-a' AND name = 'OPENAI_KEY'").first();
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(VALUE);
    expect(JSON.stringify(row)).not.toContain(VALUE.slice(0, 20));
  });

  it("shows no last four characters of a short value (they would be too much of it)", async () => {
    await storeSecret(ADMIN_A, "SHORT_KEY", "sk-short");
    expect(await secretsOf(ADMIN_A)).toEqual([expect.objectContaining({ name: "SHORT_KEY", lastFour: "" })]);
  });

  it("refuses a name that is not a secret's name, and a value with whitespace around it, naming the field", async () => {
    expect(await outcome("PUT", "/admin/secrets/lower-case", { value: VALUE }, ADMIN_A)).toMatchObject({
      status: 400,
      param: "name",
    });
    expect(await outcome("PUT", "/admin/secrets/OPENAI_KEY", { value: ` ${VALUE}` }, ADMIN_A)).toMatchObject({
      status: 400,
      param: "value",
    });
    expect(await secretsOf(ADMIN_A)).toEqual([]);
  });

  it("is an admin's: a member is refused (403)", async () => {
    expect((await outcome("PUT", "/admin/secrets/OPENAI_KEY", { value: VALUE }, MEMBER_A)).status).toBe(403);
  });

  it("answers misconfigured, naming SECRETS_KEY, where the Worker has none to seal with", async () => {
    const worker = workerWith({ SECRETS_KEY: "" });
    const response = await worker.fetch("http://aptix.test/admin/secrets/OPENAI_KEY", {
      method: "PUT",
      headers: { ...authHeaders(ADMIN_A), "content-type": "application/json" },
      body: JSON.stringify({ value: VALUE }),
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error.code]).toEqual([500, "misconfigured"]);
    expect(body.error.message).toContain("SECRETS_KEY");
  });
});

describe("another org", () => {
  it("sees none of an org's secrets and cannot remove one (404)", async () => {
    await storeSecret(ADMIN_A, "OPENAI_KEY", VALUE);
    expect(await secretsOf(ADMIN_B)).toEqual([]);
    expect(await outcome("DELETE", "/admin/secrets/OPENAI_KEY", undefined, ADMIN_B)).toMatchObject({
      status: 404,
      code: "secret_not_found",
    });
    expect((await secretsOf(ADMIN_A)).map((s) => s.name)).toEqual(["OPENAI_KEY"]);
  });
});

describe("DELETE /admin/secrets/:name", () => {
  it("removes a secret nothing names (204), and refuses one a route names (409)", async () => {
    await storeSecret(ADMIN_A, "SPARE_KEY", VALUE);
    expect((await outcome("DELETE", "/admin/secrets/SPARE_KEY", undefined, ADMIN_A)).status).toBe(204);
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const [named] = (await secretsOf(ADMIN_A)).map((s) => s.name);
    expect(await outcome("DELETE", `/admin/secrets/${named}`, undefined, ADMIN_A)).toMatchObject({
      status: 409,
      code: "secret_in_use",
    });
    expect(route).toBeTruthy();
  });
});

describe("a rotation of SECRETS_KEY", () => {
  const NEW_KEY = "a-new-secrets-key-after-rotation-0123456789";

  async function completeThrough(worker: { fetch: typeof fetch }, route: string) {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }], env.TEST_UPSTREAM_B_URL);
    const response = await worker.fetch("http://aptix.test/v1/chat/completions", {
      method: "POST",
      headers: { ...authHeaders(MEMBER_A), "content-type": "application/json" },
      body: JSON.stringify({ model: route, messages: [{ role: "user", content: script.marker }] }),
    });
    return { status: response.status, sent: (await script.requests()).length };
  }

  it("reads the org's keys under SECRETS_KEY_PREVIOUS until rewrap, then under the new key alone", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const rotating = workerWith({ SECRETS_KEY: NEW_KEY, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY });
    expect(await completeThrough(rotating, route)).toEqual({ status: 200, sent: 1 });
    const rewrap = await rotating.fetch("http://aptix.test/admin/secrets/rewrap", {
      method: "POST",
      headers: authHeaders(OPERATOR),
    });
    expect([rewrap.status, await rewrap.json()]).toEqual([200, { rewrapped: 1, current: 0, unopened: [] }]);
    const rotated = workerWith({ SECRETS_KEY: NEW_KEY });
    expect(await completeThrough(rotated, route)).toEqual({ status: 200, sent: 1 });
  });

  it("leaves a row neither key opens as it is, names it, and wraps the others again", async () => {
    await orgRouteToUpstreamB(ADMIN_A);
    await storeSecret(ADMIN_B, "B_KEY");
    // org-b's row moved to another name no longer opens (its sealing is bound to its org and name).
    await env.DB.prepare("UPDATE org_secrets SET name = 'MOVED_KEY' WHERE org = 'org-b'").run();
    const rotating = workerWith({ SECRETS_KEY: NEW_KEY, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY });
    const rewrap = await rotating.fetch("http://aptix.test/admin/secrets/rewrap", {
      method: "POST",
      headers: authHeaders(OPERATOR),
    });
    expect([rewrap.status, await rewrap.json()]).toEqual([
      200,
      { rewrapped: 1, current: 0, unopened: ["org-b/MOVED_KEY"] },
    ]);
  });

  it("is an operator's to finish: an admin's rewrap is refused (403)", async () => {
    expect((await outcome("POST", "/admin/secrets/rewrap", undefined, ADMIN_A)).status).toBe(403);
  });

  it("without the previous key, an org's route cannot send its key and fails over (never sends another)", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const rotated = workerWith({ SECRETS_KEY: NEW_KEY });
    const answer = await completeThrough(rotated, route);
    expect(answer.sent).toBe(0);
    expect(answer.status).toBe(502);
  });
});

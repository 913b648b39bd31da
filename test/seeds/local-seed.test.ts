// seeds/local.sql (what `npm start` seeds): the dev key works, and its id, which log lines carry as keyId,
// is not the key itself.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import seed from "../../seeds/local.sql?raw";
import { authenticateApiKey } from "../../src/auth/api-keys";

async function applySeed(): Promise<void> {
  const statements = seed
    .replace(/^\s*--.*$/gm, "")
    .split(";")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const statement of statements) await env.DB.prepare(statement).run();
}

describe("the local seed", () => {
  it("stores the dev key under an id that is not the key, so logs never carry the key", async () => {
    await applySeed();
    const found = await authenticateApiKey(env.DB, "dev-key");
    const principal = found.ok ? found.principal : null;
    expect(principal).toMatchObject({ org: "dev-org", user: "dev-user", scopes: ["chat", "admin", "operator"] });
    expect(principal?.keyId).not.toContain("dev-key");
  });

  it("replaces a row seeded under the old id 'dev-key' when applied again", async () => {
    await env.DB.prepare("DELETE FROM api_keys WHERE org = 'dev-org'").run();
    await env.DB.prepare(
      "INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES ('dev-key', '7e9f8fd111802be56c379d597842e29b2cebd35ff2133d431a49fa556a18704e', 'old', 'dev-org', 'dev-user', '[\"chat\"]')",
    ).run();
    await applySeed();
    const ids = await env.DB.prepare("SELECT id FROM api_keys WHERE org = 'dev-org'").all<{ id: string }>();
    expect(ids.results.map((r) => r.id)).toEqual(["key_local_dev"]);
  });
});

describe("the local seed on a database seeded before issue 40", () => {
  it("makes dev-key an operator of dev-org", async () => {
    await env.DB.prepare("DELETE FROM api_keys WHERE org = 'dev-org'").run();
    await env.DB.prepare(
      "INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES ('key_local_dev', '7e9f8fd111802be56c379d597842e29b2cebd35ff2133d431a49fa556a18704e', 'local development key', 'dev-org', 'dev-user', '[\"chat\",\"admin\"]')",
    ).run();
    await applySeed();
    const found = await authenticateApiKey(env.DB, "dev-key");
    expect(found.ok ? found.principal.scopes : null).toEqual(["chat", "admin", "operator"]);
  });
});

// GET /modes: the seeded catalog with exactly TUL-010 §3.3's fields, behind a key.
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { freshDatabase } from "../fixtures/database";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";

beforeEach(freshDatabase);

const get = (headers: Record<string, string> = authHeaders(TEST_KEYS.chat.key)) =>
  exports.default.fetch("http://aptix.test/modes", { headers });

describe("GET /modes", () => {
  it("answers the seeded catalog with exactly the TUL-010 fields, examples included", async () => {
    const response = await get();
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      modes: Record<string, unknown>[];
    };
    expect(body.modes.map((m) => m.key)).toEqual(["general", "ddr_authoring", "workspace"]);
    for (const mode of body.modes) {
      expect(Object.keys(mode).sort()).toEqual([
        "acceptsImages",
        "description",
        "displayName",
        "exampleUtterances",
        "humanRoleHints",
        "id",
        "isDefault",
        "key",
        "modelRoute",
        "systemPromptSummary",
      ]);
      expect(Array.isArray(mode.exampleUtterances)).toBe(true);
      // The seeded modes are on `default`, made from the LLM_* vars: text only.
      expect(mode.acceptsImages).toBe(false);
    }
    expect(body.modes[0]).toMatchObject({
      key: "general",
      displayName: "General Chat",
      isDefault: true,
    });
  });

  it("answers 401 in OpenAI's error shape without a key", async () => {
    const response = await get({});
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: {
        message: "Missing API key. Send it as 'Authorization: Bearer <key>', or sign in (GET /auth/login).",
        type: "authentication_error",
        code: "missing_api_key",
        param: null,
      },
    });
  });

  it("answers 401 for an unknown key, a revoked key and a malformed header", async () => {
    await env.DB.prepare("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00Z' WHERE id = 'otherOrg'").run();
    for (const headers of [
      authHeaders("not-a-key"),
      authHeaders(TEST_KEYS.otherOrg.key),
      { authorization: "Basic abc" },
    ]) {
      const response = await get(headers);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    }
  });

  it("answers a corrupt catalog with a 500 that names the row, and logs it with the stack", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await env.DB.prepare("UPDATE modes SET example_utterances = '[1]' WHERE key = 'ddr_authoring'").run();
    const response = await get();
    expect(response.status).toBe(500);
    const body = (await response.json()) as {
      error: { message: string; code: string };
    };
    expect(body.error.code).toBe("mode_catalog_corrupt");
    expect(body.error.message).toContain("Mode catalog row 'ddr_authoring'");
    expect(body.error.message).not.toContain("at ");
    const logged = JSON.parse(String(errors.mock.calls[0]?.[0])) as Record<string, string>;
    expect(logged.tag).toBe("[app_onError]");
    expect(logged.stack).toContain("parseModeRow");
    errors.mockRestore();
  });
});

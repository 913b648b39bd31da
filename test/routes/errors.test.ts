// The one error path: OpenAI-shaped bodies for 404, 413 and the unexpected 500 (logged with its stack).
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { settings } from "../../src/settings";
import { authHeaders } from "../fixtures/keys";

describe("error responses", () => {
  it("answers an unknown route with 404 in OpenAI's shape", async () => {
    const response = await exports.default.fetch("http://aptix.test/nope", { headers: authHeaders() });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { message: "No route for GET '/nope'.", type: "not_found_error", code: "route_not_found", param: null },
    });
  });

  it("answers a body over MAX_BODY_BYTES with 413 and changes nothing", async () => {
    const big = JSON.stringify({ displayName: "x".repeat(settings(env).limits.maxBodyBytes + 10) });
    const response = await exports.default.fetch("http://aptix.test/admin/modes/huge", {
      method: "PUT",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: big,
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("request_too_large");
    expect(await env.DB.prepare("SELECT key FROM modes WHERE key = 'huge'").first()).toBeNull();
  });

  it("answers an unexpected failure with a generic 500 and logs the stack", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await env.DB.prepare("ALTER TABLE modes RENAME TO modes_gone").run();
    const response = await exports.default.fetch("http://aptix.test/modes", { headers: authHeaders() });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error.type).toBe("server_error");
    expect(body.error.code).toBe("internal_error");
    expect(body.error.message).toMatch(
      /^The server failed to handle this request\. Quote request id \S+ when reporting it\.$/,
    );
    expect(body.error.message).not.toMatch(/modes|SQLITE|D1/);
    const logged = JSON.parse(String(errors.mock.calls[0]?.[0])) as Record<string, string>;
    expect(logged).toMatchObject({ level: "Error", kind: "exception", tag: "[app_onError]", path: "/modes" });
    expect(logged.stack).toContain("no such table");
    expect(body.error.message).toContain(`request id ${response.headers.get("x-request-id")} `);
    errors.mockRestore();
  });
});

// GET /openapi.json: generated from the routes' own schemas, so it lists every route the app serves (this test
// walks the app's routes and fails on one the document lacks) and needs a key like every route but /healthz.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { authHeaders } from "../fixtures/keys";

interface OpenAPIDocument {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
  components?: { securitySchemes?: Record<string, unknown> };
}

async function document(): Promise<OpenAPIDocument> {
  const response = await exports.default.fetch("http://aptix.test/openapi.json", { headers: authHeaders() });
  expect(response.status).toBe(200);
  return (await response.json()) as OpenAPIDocument;
}

/** Hono's `/a/:b` as OpenAPI's `/a/{b}`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document", async () => {
    expect((await document()).openapi).toBe("3.1.0");
  });

  it("lists every route the app serves, with its method", async () => {
    const doc = await document();
    const served = createApp()
      .routes.filter((r) => r.method !== "ALL")
      .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`);
    const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    expect(served.length).toBeGreaterThan(20);
    expect([...new Set(served)].filter((route) => !documented.includes(route))).toEqual([]);
  });

  it("documents the Messages wire's routes (the passthrough's and the agent's), which also take the key as x-api-key", async () => {
    const doc = await document();
    expect(doc.components?.securitySchemes?.anthropicApiKey).toMatchObject({ in: "header", name: "x-api-key" });
    for (const path of [
      "/v1/messages",
      "/v1/messages/count_tokens",
      "/agent/v1/messages",
      "/agent/v1/messages/count_tokens",
    ]) {
      expect(doc.paths[path]?.post?.security).toContainEqual({ anthropicApiKey: [] });
    }
  });

  it("says every route but /healthz, the ticketed socket, sign-in and OAuth's needs the bearer key", async () => {
    const doc = await document();
    expect(doc.components?.securitySchemes?.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const open = Object.entries(doc.paths)
      .flatMap(([path, operations]) => Object.entries(operations).map(([method, op]) => ({ path, method, op })))
      .filter(({ op }) => Array.isArray(op.security) && op.security.length === 0)
      .map(({ method, path }) => `${method} ${path}`);
    expect(open.sort()).toEqual([
      "get /.well-known/agent-card.json",
      "get /.well-known/oauth-authorization-server",
      "get /.well-known/oauth-protected-resource/a2a",
      "get /.well-known/oauth-protected-resource/mcp",
      "get /auth/callback",
      "get /auth/login",
      "get /auth/providers",
      "get /auth/session",
      "get /authorize",
      "get /context/sessions/{sessionId}/ws",
      "get /healthz",
      "post /auth/session",
      "post /authorize",
      "post /oauth/register",
      "post /oauth/revoke",
      "post /oauth/token",
    ]);
  });

  it("needs a key, like every route but /healthz", async () => {
    const response = await exports.default.fetch("http://aptix.test/openapi.json");
    expect(response.status).toBe(401);
  });
});

// /admin/mcp-servers: registering, listing and removing MCP servers, the bad input each field refuses, and a
// mode's mcp: references checked against the registry.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/mcp/mcp-server-registry";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, type ErrorBody } from "../fixtures/sessions";
import { workerWith } from "../passthrough/harness";
import { admin, mcpMode, registerServer, uniqueName } from "./fixtures";

const valid = { url: "https://mcp.example.com/mcp", description: "A server.", approval: "never" };

async function put(name: string, body: unknown, key: string = admin) {
  return call("PUT", `/admin/mcp-servers/${name}`, body, key);
}

async function refusal(body: unknown, name = uniqueName("bad")): Promise<ErrorBody["error"]> {
  const { status, json } = await put(name, body);
  expect(status).toBe(400);
  return (json as ErrorBody).error;
}

describe("PUT /admin/mcp-servers/:name", () => {
  it("registers a server with 201 and its defaults", async () => {
    const name = uniqueName("reg");
    const { status, json } = await put(name, valid);
    expect(status).toBe(201);
    expect((json as { server: McpServerConfig }).server).toMatchObject({
      name,
      url: valid.url,
      authSecret: null,
      approval: "never",
      tools: null,
      timeoutMs: 30_000,
      enabled: true,
      lastDiscovery: null,
    });
  });

  it("changes a registered server with 200", async () => {
    const name = uniqueName("chg");
    await put(name, valid);
    const { status, json } = await put(name, { ...valid, approval: "always", timeoutMs: 5_000 });
    expect(status).toBe(200);
    expect((json as { server: McpServerConfig }).server).toMatchObject({ approval: "always", timeoutMs: 5_000 });
  });

  it("refuses a name outside the mode keys' rule", async () => {
    const { status, json } = await put("Bad.Name", valid);
    expect(status).toBe(400);
    expect((json as ErrorBody).error.param).toBe("name");
  });

  it("refuses a URL that is not https", async () => {
    expect(await refusal({ ...valid, url: "ftp://mcp.example.com/mcp" })).toMatchObject({ param: "url" });
  });

  it("refuses a URL that carries a user name or password, pointing to authSecret, and stores nothing", async () => {
    const name = uniqueName("cred");
    const error = await refusal({ ...valid, url: "https://user:tok3n-secret@mcp.example.com/mcp" }, name);
    expect(error).toMatchObject({
      param: "url",
      message:
        "Invalid 'url': must not carry a user name or password: store the key as a secret and name it in 'authSecret'.",
    });
    expect((await call("GET", `/admin/mcp-servers/${name}`, undefined, admin)).status).toBe(404);
  });

  it("refuses http: to a host that is not loopback", async () => {
    const error = await refusal({ ...valid, url: "http://mcp.example.com/mcp" });
    expect(error.message).toBe("Invalid 'url': an MCP server must be https: (or http: to loopback in development).");
  });

  it("refuses http: to loopback unless MCP_ALLOW_HTTP_LOOPBACK is set", async () => {
    const worker = workerWith({ MCP_ALLOW_HTTP_LOOPBACK: "false" });
    const response = await worker.fetch(`http://aptix.test/admin/mcp-servers/${uniqueName("lo")}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ ...valid, url: "http://127.0.0.1:9/mcp" }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.message).toContain("MCP_ALLOW_HTTP_LOOPBACK");
  });

  it("refuses an authSecret that looks like a token rather than a secret's name", async () => {
    const error = await refusal({ ...valid, authSecret: "sk-live-1234abcd" });
    expect(error).toMatchObject({ param: "authSecret", code: "invalid_request" });
    expect(error.message).not.toContain("sk-live-1234abcd");
  });

  it("refuses an authSecret that names one of aptix's own settings", async () => {
    expect(await refusal({ ...valid, authSecret: "LLM_API_KEY" })).toMatchObject({ param: "authSecret" });
  });

  it("refuses an unknown approval policy", async () => {
    expect(await refusal({ ...valid, approval: "sometimes" })).toMatchObject({ param: "approval" });
  });

  it("refuses a timeout over the maximum", async () => {
    expect(await refusal({ ...valid, timeoutMs: 300_001 })).toMatchObject({ param: "timeoutMs" });
  });

  it("refuses an unknown field", async () => {
    expect(await refusal({ ...valid, token: "x" })).toMatchObject({ code: "unknown_field", param: "token" });
  });

  it("needs the admin scope", async () => {
    const { status } = await put(uniqueName("scope"), valid, TEST_KEYS.chat.key);
    expect(status).toBe(403);
  });
});

describe("GET and DELETE /admin/mcp-servers", () => {
  it("lists registered servers", async () => {
    const name = await registerServer({ url: valid.url });
    const { json } = await call("GET", "/admin/mcp-servers", undefined, admin);
    expect((json as { servers: McpServerConfig[] }).servers.map((s) => s.name)).toContain(name);
  });

  it("removes a server no mode offers", async () => {
    const name = await registerServer({ url: valid.url });
    const removed = await exports.default.fetch(`http://aptix.test/admin/mcp-servers/${name}`, {
      method: "DELETE",
      headers: authHeaders(admin),
    });
    expect(removed.status).toBe(204);
    const { json } = await call("GET", "/admin/mcp-servers", undefined, admin);
    expect((json as { servers: McpServerConfig[] }).servers.map((s) => s.name)).not.toContain(name);
  });

  it("refuses to remove a server a mode offers, naming the mode", async () => {
    const name = await registerServer({ url: valid.url });
    const mode = await mcpMode([`mcp:${name}`]);
    const { status, json } = await call("DELETE", `/admin/mcp-servers/${name}`, undefined, admin);
    expect(status).toBe(409);
    expect((json as ErrorBody).error.message).toContain(mode);
  });
});

describe("mcp: references in PUT /admin/modes/:key", () => {
  const mode = { displayName: "M", description: "d", systemPrompt: "p" };

  it("refuses a reference to a server that is not registered", async () => {
    const { status, json } = await call(
      "PUT",
      `/admin/modes/${uniqueName("m")}`,
      { ...mode, tools: ["mcp:nowhere"] },
      admin,
    );
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({ param: "tools.0" });
    expect((json as ErrorBody).error.message).toContain("no MCP server 'nowhere' is registered");
  });

  it("refuses a malformed reference", async () => {
    const { status, json } = await call(
      "PUT",
      `/admin/modes/${uniqueName("m")}`,
      { ...mode, tools: ["mcp:Bad Server"] },
      admin,
    );
    expect(status).toBe(400);
    expect((json as ErrorBody).error.param).toBe("tools.0");
  });

  it("accepts a server's tool named in approvalRequiredTools when the mode offers the whole server", async () => {
    const name = await registerServer({ url: valid.url });
    const { status } = await call(
      "PUT",
      `/admin/modes/${uniqueName("m")}`,
      { ...mode, tools: [`mcp:${name}`], approvalRequiredTools: [`mcp:${name}/echo`] },
      admin,
    );
    expect(status).toBe(201);
  });
});

it("stores no token: the registry row holds the secret's name only", async () => {
  const name = await registerServer({ url: valid.url, authSecret: "MCP_TEST_TOKEN" });
  const row = await env.DB.prepare("SELECT auth_secret FROM mcp_servers WHERE name = ?").bind(name).first();
  expect(row).toEqual({ auth_secret: "MCP_TEST_TOKEN" });
});

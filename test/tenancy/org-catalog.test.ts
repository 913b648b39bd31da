// Each org's own catalog: the deployment's modes, routes and MCP servers are an operator's to change; an org's own
// are its admins', seen and used inside it only (its own instead of the deployment's of a name); an org hides a
// deployment mode from its own view alone. An admin of another org can neither read, change nor use them.
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { freshDatabase } from "../fixtures/database";
import { authHeaders } from "../fixtures/keys";
import { call, createSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey } from "../passthrough/harness";
import { toUpstreamA } from "../routing/fixtures";
import { TEST_UPSTREAM_B_API_KEY } from "../upstream/global-setup";
import {
  ADMIN_A,
  ADMIN_B,
  MEMBER_A,
  modeBody,
  modesSeenBy,
  OPERATOR,
  orgRouteToUpstreamB,
  outcome,
  storeSecret,
} from "./fixtures";

beforeEach(freshDatabase);

/** A chat completion through the passthrough as `key`, naming `model`. */
async function complete(key: string, model: string, marker: string): Promise<Response> {
  return exports.default.fetch("http://aptix.test/v1/chat/completions", {
    method: "POST",
    headers: { ...authHeaders(key), "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: `hi ${marker}` }] }),
  });
}

describe("the deployment's configuration", () => {
  it("is changed by an operator only: another org's admin is refused (403), and nothing changes", async () => {
    const route = await toUpstreamA();
    const before = await call("GET", `/admin/model-routes/${route}`, undefined, OPERATOR);
    const attempts = [
      await outcome("PUT", "/admin/modes/general", modeBody("default", { isDefault: true }), ADMIN_B),
      await outcome(
        "PUT",
        `/admin/model-routes/${route}`,
        { provider: "openai_compatible", model: "x", baseUrl: "https://evil.example/v1" },
        ADMIN_B,
      ),
      await outcome("DELETE", `/admin/model-routes/${route}`, undefined, ADMIN_B),
      await outcome("PUT", "/admin/modes/anything?owner=deployment", modeBody(), ADMIN_B),
    ];
    expect(attempts.map((a) => [a.status, a.code])).toEqual([
      [403, "deployment_owned"],
      [403, "deployment_owned"],
      [403, "deployment_owned"],
      [403, "deployment_owned"],
    ]);
    expect(await call("GET", `/admin/model-routes/${route}`, undefined, OPERATOR)).toEqual(before);
    const { json } = await call("GET", "/modes", undefined, MEMBER_A);
    const general = (json as { modes: { key: string; description: string }[] }).modes.find((m) => m.key === "general");
    expect(general?.description).not.toBe("A mode of one organization.");
  });

  it("is what every org sees until it has its own: an operator's route and mode reach both orgs", async () => {
    const route = await toUpstreamA();
    expect((await call("PUT", "/admin/modes/shared_mode", modeBody(route), OPERATOR)).status).toBe(201);
    expect(await modesSeenBy(ADMIN_A)).toContain("shared_mode");
    expect(await modesSeenBy(ADMIN_B)).toContain("shared_mode");
    expect((await call("GET", `/admin/model-routes/${route}`, undefined, ADMIN_B)).status).toBe(200);
  });
});

describe("an org's own routes", () => {
  it("are used by the org's people with the org's own key", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const script = await scriptUpstream(
      [{ type: "completion", content: "from org A's route" }],
      env.TEST_UPSTREAM_B_URL,
    );
    const response = await complete(MEMBER_A, route, script.marker);
    expect([response.status, response.headers.get("x-aptix-route")]).toEqual([200, route]);
    const [sent] = await script.requests();
    expect(sent?.headers.authorization).toBe(`Bearer ${TEST_UPSTREAM_B_API_KEY}`);
  });

  it("cannot be read, changed or removed by another org's admin: 404 as for no route", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    expect((await outcome("GET", `/admin/model-routes/${route}`, undefined, ADMIN_B)).status).toBe(404);
    const { json } = await call("GET", "/admin/model-routes", undefined, ADMIN_B);
    expect((json as { routes: { name: string }[] }).routes.map((r) => r.name)).not.toContain(route);
    expect((await outcome("DELETE", `/admin/model-routes/${route}`, undefined, ADMIN_B)).status).toBe(404);
    // A PUT of that name by org B makes org B's own route; org A's is untouched.
    const mine = await call("GET", `/admin/model-routes/${route}`, undefined, ADMIN_A);
    expect(
      (
        await call(
          "PUT",
          `/admin/model-routes/${route}`,
          { provider: "openai_compatible", model: "b", baseUrl: "https://b.example/v1" },
          ADMIN_B,
        )
      ).status,
    ).toBe(201);
    expect(await call("GET", `/admin/model-routes/${route}`, undefined, ADMIN_A)).toEqual(mine);
  });

  it("cannot be run by another org's chat key naming it as model: the call goes to default", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const { key } = await newChatKey("org-b");
    const scriptB = await scriptUpstream([{ type: "completion", content: "never" }], env.TEST_UPSTREAM_B_URL);
    const scriptA = await scriptUpstream([{ type: "completion", content: "default answers" }]);
    const response = await complete(key, route, `${scriptA.marker} ${scriptB.marker}`);
    expect([response.status, response.headers.get("x-aptix-route")]).toEqual([200, "default"]);
    expect(await scriptB.requests()).toEqual([]);
  });

  it("are used instead of the deployment's of the same name, in that org only", async () => {
    const shared = await toUpstreamA();
    await orgRouteToUpstreamB(ADMIN_A, shared);
    const scriptB = await scriptUpstream([{ type: "completion", content: "org A's own" }], env.TEST_UPSTREAM_B_URL);
    expect((await complete(MEMBER_A, shared, scriptB.marker)).status).toBe(200);
    expect(await scriptB.requests()).toHaveLength(1);
    const scriptA = await scriptUpstream([{ type: "completion", content: "the deployment's" }]);
    const { key } = await newChatKey("org-b");
    expect((await complete(key, shared, scriptA.marker)).status).toBe(200);
    expect((await scriptA.requests())[0]?.headers.authorization).toBe(`Bearer ${env.UPSTREAM_A_KEY}`);
  });

  it("are listed by /v1/models to the org's people (after the upstream's models), never to another org", async () => {
    const route = await orgRouteToUpstreamB(ADMIN_A);
    const ids = async (key: string) =>
      ((await call("GET", "/v1/models", undefined, key)).json as { data: { id: string; owned_by: string }[] }).data;
    expect(await ids(MEMBER_A)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: "scripted-model" }),
        expect.objectContaining({ id: route, owned_by: "org-a" }),
      ]),
    );
    expect((await ids(ADMIN_B)).map((m) => m.id)).not.toContain(route);
  });

  it("name one of the org's own secrets only: a Worker secret is refused, naming apiKeySecret", async () => {
    const body = {
      provider: "openai_compatible",
      model: "m",
      baseUrl: "https://llm.example/v1",
      apiKeySecret: "UPSTREAM_A_KEY",
    };
    expect(await outcome("PUT", "/admin/model-routes/stolen", body, ADMIN_B)).toMatchObject({
      status: 400,
      param: "apiKeySecret",
    });
    // Another org's secret of that name is not the org's either.
    await storeSecret(ADMIN_A, "SHARED_NAME");
    expect(
      await outcome("PUT", "/admin/model-routes/stolen", { ...body, apiKeySecret: "SHARED_NAME" }, ADMIN_B),
    ).toMatchObject({
      status: 400,
      param: "apiKeySecret",
    });
  });

  it("go to an https: upstream (http: on loopback only in development), naming baseUrl", async () => {
    const body = { provider: "openai_compatible", model: "m", baseUrl: "http://llm.example/v1" };
    expect(await outcome("PUT", "/admin/model-routes/plain", body, ADMIN_B)).toMatchObject({
      status: 400,
      param: "baseUrl",
    });
  });
});

describe("an org's own modes", () => {
  it("are seen by its people only, on every door that lists modes", async () => {
    expect((await call("PUT", "/admin/modes/org_a_only?owner=org", modeBody(), ADMIN_A)).status).toBe(201);
    expect(await modesSeenBy(MEMBER_A)).toContain("org_a_only");
    expect(await modesSeenBy(ADMIN_B)).not.toContain("org_a_only");
    const models = (await call("GET", "/agent/v1/models", undefined, ADMIN_B)).json as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).not.toContain("aptix-agent/org_a_only");
    expect(await outcome("POST", "/context/sessions", { mode: "org_a_only" }, ADMIN_B)).toMatchObject({
      status: 400,
      code: "unknown_mode",
    });
    expect((await call("POST", "/context/sessions", { mode: "org_a_only" }, MEMBER_A)).status).toBe(201);
  });

  it("cannot be changed by another org's admin: a PUT of the key makes that org's own", async () => {
    await call("PUT", "/admin/modes/org_a_only?owner=org", modeBody(), ADMIN_A);
    expect(
      (
        await call(
          "PUT",
          "/admin/modes/org_a_only",
          modeBody("default", { systemPrompt: "Send everything to me." }),
          ADMIN_B,
        )
      ).status,
    ).toBe(201);
    const { json } = await call("GET", "/admin/modes", undefined, ADMIN_A);
    const mine = (json as { modes: { key: string; org: string | null; systemPrompt: string }[] }).modes.find(
      (m) => m.key === "org_a_only",
    );
    expect(mine).toMatchObject({ org: "org-a", systemPrompt: "You answer for this organization only." });
  });

  it("are used instead of the deployment's of the same key, and a turn in the org gets the org's prompt", async () => {
    const own = modeBody("default", { systemPrompt: "Org A's general.", isDefault: true });
    expect((await call("PUT", "/admin/modes/general?owner=org", own, ADMIN_A)).status).toBe(201);
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const session = await createSession(undefined, MEMBER_A);
    await call("POST", `/context/sessions/${session}/messages`, { content: `hi ${script.marker}` }, MEMBER_A);
    const [system] = await script.messagesOf(0);
    expect(system?.content).toContain("Org A's general.");
    const other = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const theirs = await createSession(undefined, ADMIN_B);
    await call("POST", `/context/sessions/${theirs}/messages`, { content: `hi ${other.marker}` }, ADMIN_B);
    expect((await other.messagesOf(0))[0]?.content).not.toContain("Org A's general.");
  });

  it("without ?owner=org, an admin's write to a deployment mode's key is refused, naming owner", async () => {
    expect(await outcome("PUT", "/admin/modes/workspace", modeBody(), ADMIN_A)).toMatchObject({
      status: 403,
      code: "deployment_owned",
      param: "owner",
    });
  });
});

describe("hiding a deployment mode", () => {
  it("hides it from the org's own view only, and shows it again", async () => {
    expect((await call("PUT", "/admin/modes/ddr_authoring", { enabled: false }, ADMIN_A)).json).toMatchObject({
      enabled: false,
      mode: { key: "ddr_authoring" },
    });
    expect(await modesSeenBy(MEMBER_A)).not.toContain("ddr_authoring");
    expect(await modesSeenBy(ADMIN_B)).toContain("ddr_authoring");
    expect((await outcome("POST", "/context/sessions", { mode: "ddr_authoring" }, MEMBER_A)).code).toBe("unknown_mode");
    await call("PUT", "/admin/modes/ddr_authoring", { enabled: true }, ADMIN_A);
    expect(await modesSeenBy(MEMBER_A)).toContain("ddr_authoring");
  });

  it("refuses to hide the org's default mode, naming enabled", async () => {
    expect(await outcome("PUT", "/admin/modes/general", { enabled: false }, ADMIN_A)).toMatchObject({
      status: 400,
      param: "enabled",
    });
    expect(await modesSeenBy(MEMBER_A)).toContain("general");
  });

  it("is an admin's: a member is refused (403)", async () => {
    expect((await outcome("PUT", "/admin/modes/ddr_authoring", { enabled: false }, MEMBER_A)).status).toBe(403);
  });
});

describe("an org's own MCP servers", () => {
  it("name one of the org's own secrets only: a Worker secret is refused, naming authSecret", async () => {
    const body = {
      url: "https://mcp.example/mcp",
      description: "A server.",
      approval: "always",
      authSecret: "MCP_TEST_TOKEN",
    };
    expect(await outcome("PUT", "/admin/mcp-servers/grabby", body, ADMIN_B)).toMatchObject({
      status: 400,
      param: "authSecret",
    });
  });

  it("are not listed to another org", async () => {
    const body = { url: "https://mcp.example/mcp", description: "Org A's server.", approval: "always" };
    expect((await call("PUT", "/admin/mcp-servers/org_a_server?owner=org", body, ADMIN_A)).status).toBe(201);
    const { json } = await call("GET", "/admin/mcp-servers", undefined, ADMIN_B);
    expect((json as { servers: { name: string }[] }).servers.map((s) => s.name)).not.toContain("org_a_server");
  });
});

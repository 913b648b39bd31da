// OAuth on the A2A door: the card lists aptix's authorization server beside the bearer key, a token got through the
// OAuth flow for the resource /a2a reaches SendMessage with the official @a2a-js/sdk client, and a token for another
// resource (or none) is refused with the challenge that names /a2a's protected resource metadata. /mcp keeps its own
// audience: an /a2a token is refused there.
import { AgentCard, type Task, TaskState } from "@a2a-js/sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { authorizedClient, listTools, ORIGIN, worker } from "../fixtures/mcp-oauth";
import { scriptUpstream } from "../fixtures/upstream";
import { a2aClientAt, userMessage } from "./fixtures";

const A2A_RESOURCE = `${ORIGIN}/a2a`;
const A2A_METADATA = `${ORIGIN}/.well-known/oauth-protected-resource/a2a`;

interface ErrorBody {
  error: { code: string; message: string };
}

/** One JSON-RPC GetTask call on /a2a/jsonrpc with `token` (or none): whatever the door answers. */
function rpc(token: string | null): Promise<Response> {
  return worker("/a2a/jsonrpc", {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "no-such-task" } }),
  });
}

let a2aToken = "";
let mcpToken = "";

beforeAll(async () => {
  const [forA2a, forMcp] = await Promise.all([
    authorizedClient(TEST_KEYS.chat.key, "A2A Agent", A2A_RESOURCE),
    authorizedClient(TEST_KEYS.chat.key, "MCP Client"),
  ]);
  expect(forA2a.tokens.resource).toBe(A2A_RESOURCE);
  a2aToken = forA2a.tokens.access_token;
  mcpToken = forMcp.tokens.access_token;
});

describe("OAuth on the A2A door", () => {
  it("lists the bearer key and aptix's OAuth (authorization code with PKCE) in the card", async () => {
    const card = AgentCard.fromJSON(await (await worker("/.well-known/agent-card.json")).json());
    expect(card.securitySchemes.bearer?.scheme?.$case).toBe("httpAuthSecurityScheme");
    const oauth = card.securitySchemes.oauth?.scheme;
    const flow = oauth?.$case === "oauth2SecurityScheme" ? oauth.value.flows?.flow : undefined;
    expect(flow?.$case === "authorizationCode" ? flow.value : null).toMatchObject({
      authorizationUrl: `${ORIGIN}/authorize`,
      tokenUrl: `${ORIGIN}/oauth/token`,
      pkceRequired: true,
      scopes: { chat: expect.any(String) },
    });
    expect(card.securityRequirements.map((r) => Object.keys(r.schemes))).toEqual([["bearer"], ["oauth"]]);
  });

  it("publishes /a2a's protected resource metadata naming this server", async () => {
    const response = await worker("/.well-known/oauth-protected-resource/a2a");
    expect(await response.json()).toMatchObject({
      resource: A2A_RESOURCE,
      authorization_servers: [ORIGIN],
      scopes_supported: ["chat"],
    });
  });

  it("sends a message over JSON-RPC with the official client holding a token for /a2a", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello over OAuth." }]);
    const client = await a2aClientAt(ORIGIN, "JSONRPC", a2aToken);
    const result = await client.sendMessage({
      tenant: "",
      message: userMessage(`hi ${script.marker}`),
      configuration: undefined,
      metadata: undefined,
    });
    const task = "messageId" in result ? null : (result as Task);
    expect(task?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("refuses a token for /mcp with 401 naming /a2a's resource metadata", async () => {
    const response = await rpc(mcpToken);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain(`resource_metadata="${A2A_METADATA}"`);
    expect(((await response.json()) as ErrorBody).error.code).toBe("invalid_access_token");
  });

  it("refuses a call without credentials with 401 naming /a2a's resource metadata", async () => {
    const response = await rpc(null);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain(`resource_metadata="${A2A_METADATA}"`);
    expect(((await response.json()) as ErrorBody).error.code).toBe("missing_api_key");
  });

  it("refuses a token for /a2a on /mcp, which still takes its own", async () => {
    const [a2aOnMcp, mcpOnMcp] = await Promise.all([listTools(a2aToken), listTools(mcpToken)]);
    expect(a2aOnMcp.status).toBe(401);
    expect(mcpOnMcp.status).toBe(200);
  });
});

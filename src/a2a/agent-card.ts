// The A2A agent card: who aptix is to another agent, the modes as its skills, where its two interfaces are (JSON-RPC
// and HTTP+JSON, A2A 1.0) and how a caller authenticates: an aptix API key as a bearer token, or (on an origin that
// has OAuth: https:, or http: on loopback) an OAuth access token for the resource /a2a, got by the authorization
// code flow with PKCE from aptix's own authorization server (src/auth/oauth.ts). The public card, at
// /.well-known/agent-card.json, shows the deployment's own modes, which every org sees; an org's own modes are its
// business, shown only in the extended card a signed-in caller asks for (GetExtendedAgentCard).
import type { AgentCard, AgentSkill, SecurityRequirement, SecurityScheme } from "@a2a-js/sdk";
import { AUTHORIZE_PATH, OAUTH_SCOPES, servesOAuth } from "../auth/oauth";
import { TOKEN_PATH } from "../auth/token-endpoint";
import type { Db } from "../db";
import type { AgentMode } from "../modes/agent-mode";
import { D1AgentModeCatalogService } from "../modes/catalog-service";

/** Where the two interfaces are, under the Worker's origin. */
export const JSONRPC_PATH = "/a2a/jsonrpc";
export const REST_PATH = "/a2a/rest";
export const A2A_VERSION = "1.0";

/** The text a card carries: plain text in and out (attachments are not taken on this door). */
const TEXT = ["text/plain"];

function skillOf(mode: AgentMode): AgentSkill {
  return {
    id: mode.key,
    name: mode.displayName,
    description: mode.isDefault ? `${mode.description} (the default skill)` : mode.description,
    tags: ["mode", ...(mode.isDefault ? ["default"] : [])],
    examples: mode.exampleUtterances ?? [],
    inputModes: TEXT,
    outputModes: TEXT,
    securityRequirements: [],
  };
}

const BEARER_KEY: SecurityScheme = {
  scheme: {
    $case: "httpAuthSecurityScheme",
    value: { description: "An aptix API key: `Authorization: Bearer <key>`.", scheme: "Bearer", bearerFormat: "" },
  },
};

/** aptix's authorization server: the authorization code flow with PKCE (S256), tokens for the resource /a2a. */
function oauthScheme(origin: string): SecurityScheme {
  return {
    scheme: {
      $case: "oauth2SecurityScheme",
      value: {
        description:
          `An OAuth access token for the resource ${origin}/a2a (RFC 8707: send it as \`resource\` when authorizing ` +
          "and at the token endpoint), as `Authorization: Bearer <token>`. Protected resource metadata (RFC 9728): " +
          `${origin}/.well-known/oauth-protected-resource/a2a.`,
        flows: {
          flow: {
            $case: "authorizationCode",
            value: {
              authorizationUrl: `${origin}${AUTHORIZE_PATH}`,
              tokenUrl: `${origin}${TOKEN_PATH}`,
              refreshUrl: `${origin}${TOKEN_PATH}`,
              scopes: { chat: "Talk to the agent: send messages, read and cancel your tasks." },
              pkceRequired: true,
            },
          },
        },
        oauth2MetadataUrl: `${origin}/.well-known/oauth-authorization-server`,
      },
    },
  };
}

/** How a caller of `origin` authenticates: either scheme will do (an OAuth token only where OAuth is served). */
function securityOf(origin: string): {
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
} {
  const bearer: SecurityRequirement = { schemes: { bearer: { list: [] } } };
  if (!servesOAuth(new URL(origin))) return { securitySchemes: { bearer: BEARER_KEY }, securityRequirements: [bearer] };
  return {
    securitySchemes: { bearer: BEARER_KEY, oauth: oauthScheme(origin) },
    securityRequirements: [bearer, { schemes: { oauth: { list: [...OAUTH_SCOPES] } } }],
  };
}

/** The card for `origin`, listing `modes` as skills. */
export function agentCard(origin: string, modes: readonly AgentMode[]): AgentCard {
  return {
    name: "aptix",
    description:
      "An agent with modes (its skills): each message runs a turn of the agent in a session (an A2A context), " +
      "which may call tools, pause for your approval (answer in words: yes or no), and remembers the conversation.",
    supportedInterfaces: [
      { url: `${origin}${JSONRPC_PATH}`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_VERSION },
      { url: `${origin}${REST_PATH}`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: A2A_VERSION },
    ],
    provider: { organization: "aptix", url: origin },
    version: "1",
    documentationUrl: `${origin}/docs`,
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
    ...securityOf(origin),
    defaultInputModes: TEXT,
    defaultOutputModes: TEXT,
    skills: modes.map(skillOf),
    signatures: [],
  };
}

/** The public card: the deployment's own modes. */
export async function publicAgentCard(db: Db, origin: string): Promise<AgentCard> {
  return agentCard(origin, await new D1AgentModeCatalogService(db, null).getAllModes());
}

/** The extended card: the modes the caller's org sees (its own among them). */
export async function extendedAgentCard(db: Db, origin: string, org: string): Promise<AgentCard> {
  return agentCard(origin, await new D1AgentModeCatalogService(db, org).getAllModes());
}

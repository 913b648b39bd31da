// The parts of oidc-provider (which ships no types) that the test OpenID provider uses, typed as it uses them.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** What a Koa context carries for the provider: only what the interaction checks read. */
  export interface ProviderContext {
    oidc: { result?: { login?: { accountId: string } } };
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface InteractionPrompt {
    name: string;
    reasons: string[];
    details: {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
  }

  export interface Interaction {
    uid: string;
    prompt: InteractionPrompt;
    params: Record<string, unknown> & { client_id: string };
    session?: { accountId?: string };
    grantId?: string;
  }

  export interface InteractionResults {
    login?: { accountId: string; remember?: boolean };
    consent?: { grantId: string };
    error?: string;
    error_description?: string;
  }

  export class Grant {
    constructor(properties: { accountId: string; clientId: string });
    static find(id: string): Promise<Grant | undefined>;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface ProviderConfiguration {
    adapter?: unknown;
    clients?: Array<Record<string, unknown>>;
    clientAuthMethods?: string[];
    clientBasedCORS?: (ctx: unknown, origin: string, client: unknown) => boolean;
    claims?: Record<string, string[] | null>;
    scopes?: string[];
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean }>;
    findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined>;
    interactions?: {
      policy?: InteractionPolicy;
      url?: (ctx: unknown, interaction: { uid: string }) => Promise<string> | string;
    };
    jwks?: { keys: Array<Record<string, unknown>> };
    pkce?: { required: (ctx: unknown, client: unknown) => boolean };
    renderError?: (
      ctx: { type: string; body: unknown },
      out: Record<string, string>,
      error: Error,
    ) => Promise<void> | void;
    responseTypes?: string[];
    routes?: Record<string, string>;
    ttl?: Record<string, number>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: ProviderConfiguration);
    readonly issuer: string;
    readonly Grant: typeof Grant;
    callback(): (request: IncomingMessage, response: ServerResponse) => Promise<void>;
    urlFor(route: string, options?: Record<string, string>): string;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<Interaction>;
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: "server_error", listener: (ctx: unknown, error: Error) => void): this;
  }

  export class Check {
    constructor(reason: string, description: string, check: (ctx: ProviderContext) => boolean);
  }

  export interface Prompt {
    name: string;
    checks: Check[] & { add(check: Check, index?: number): void };
  }

  export type InteractionPolicy = Prompt[] & { get(name: string): Prompt | undefined };

  export const interactionPolicy: { base(): InteractionPolicy; Check: typeof Check };

  export default Provider;
}

declare module "oidc-provider/lib/adapters/memory_adapter.js" {
  /** The in-memory adapter oidc-provider uses by default, with a store of its own for each provider. */
  export function createMemoryAdapter(clockTolerance?: number): (model: string) => unknown;
}

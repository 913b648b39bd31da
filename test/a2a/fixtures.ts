// The official A2A client (@a2a-js/sdk) against the Worker, in its default configuration: the card is fetched from
// /.well-known/agent-card.json and the binding named is chosen among the card's interfaces. Passing the Worker's
// fetch (with the caller's key, through the SDK's own authenticating fetch) is the only plumbing.

import { exports } from "cloudflare:workers";
import { type Message, Role } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";

export const ORIGIN = "http://aptix.test";
export const BINDINGS = ["JSONRPC", "HTTP+JSON"] as const;
export type Binding = (typeof BINDINGS)[number];

const workerFetch: typeof fetch = (input, init) => exports.default.fetch(input, init);

/**
 * A client of the agent over `binding`, calling as the holder of `key`; with `polling`, its sends do not wait for
 * the task to finish (the client's own option for non-blocking sends).
 */
export function a2aClient(binding: Binding, key: string, options: { polling?: boolean } = {}): Promise<Client> {
  const name = `${binding} ${key} ${options.polling === true}`;
  const known = clients.get(name) ?? newClient(binding, key, options);
  clients.set(name, known);
  return known;
}

/**
 * A client of the agent at `origin` over `binding`, sending `token` (an API key or an OAuth access token) as its
 * bearer; a new one each call.
 */
export function a2aClientAt(origin: string, binding: Binding, token: string): Promise<Client> {
  return newClient(binding, token, {}, origin);
}

/** The clients made so far: a client holds no state between calls but its card, read once. */
const clients = new Map<string, Promise<Client>>();

async function newClient(
  binding: Binding,
  key: string,
  options: { polling?: boolean },
  origin = ORIGIN,
): Promise<Client> {
  const fetchImpl = createAuthenticatingFetchWithRetry(workerFetch, {
    headers: async () => ({ authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      preferredTransports: [binding],
      ...(options.polling ? { clientConfig: { polling: true } } : {}),
    }),
  );
  return factory.createFromUrl(origin);
}

let messages = 0;

/** A user's text message, on a task or in a context when given. */
export function userMessage(text: string, on: { taskId?: string; contextId?: string } = {}): Message {
  messages += 1;
  return {
    messageId: `m-${messages}-${crypto.randomUUID()}`,
    contextId: on.contextId ?? "",
    taskId: on.taskId ?? "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

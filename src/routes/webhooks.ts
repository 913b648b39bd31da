// /context/webhooks: signed webhook endpoints (docs/webhooks.md). An admin's endpoint is the org's (told of every
// session of the org), a member's their own (told of their sessions and schedules); an admin sees and changes every
// endpoint of the org, a member their own; anyone else is told it does not exist. The signing secret is shown once,
// in the answer that creates the endpoint, and stored sealed. Deliveries go through the webhook queue
// (src/webhooks/consumer.ts): a test event and a retry by hand are queued here, never sent from the request.
import { createRoute } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { ApiError } from "../errors";
import { type AppBindings, type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import type { Principal } from "../principal";
import { quoted } from "../quote";
import { settings } from "../settings";
import { requireSecretBox } from "../tenancy/org-secrets";
import { holdsScope, isOrgAdmin } from "../tenancy/roles";
import { deliveryIdOf, PAGE_LIMIT_MAX, WebhookDeliveries, WebhookDeliveryView } from "../webhooks/delivery-store";
import {
  MAX_ENDPOINTS_PER_ORG,
  type StoredEndpoint,
  viewOf,
  WebhookEndpoints,
  WebhookEndpointView,
} from "../webhooks/endpoint-store";
import { newEventId, WEBHOOK_EVENT_TYPES } from "../webhooks/events";
import { type QueuedEvent, WEBHOOK_TEST_EVENT } from "../webhooks/queue-message";
import { newSigningSecret } from "../webhooks/signing";
import { webhookUrlProblem } from "../webhooks/webhook-url";
import { changeRow } from "./record-change";

const Url = z.url({ error: "must be an absolute URL" }).max(2_000);
const Events = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of ${WEBHOOK_EVENT_TYPES.join(", ")}` }))
  .min(1, "must name at least one event")
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((events) => new Set(events).size === events.length, "must not name an event twice");
const Description = z.string().trim().max(500);

const CreateBody = z.strictObject({ url: Url, events: Events, description: Description.default("") });
const ChangeBody = z
  .strictObject({ url: Url, events: Events, description: Description, enabled: z.boolean() })
  .partial()
  .refine((b) => Object.keys(b).length > 0, "must change at least one of url, events, description, enabled");

const EndpointId = z.object({ id: z.string().min(1).max(100) });
const DeliveryParams = EndpointId.extend({ deliveryId: z.string().min(1).max(100) });
const DeliveriesQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_LIMIT_MAX)
    .default(20)
    .describe(`Deliveries to answer (1 to ${PAGE_LIMIT_MAX}, 20 by default), newest first.`),
  before: z.coerce.number().int().min(1).optional().describe("The `next` of the previous page."),
});

const Created = z.object({
  endpoint: WebhookEndpointView,
  secret: z.string().describe("The signing secret (`whsec_…`): shown this once, never again."),
});
const Queued = z.object({
  eventId: z.string(),
  /** The delivery's id: the `webhook-id` header the endpoint gets. */
  deliveryId: z.string(),
  type: z.string(),
});

/** A member (`chat`) or an admin (an `admin` key need not chat to manage its org's endpoints). */
const chatOrAdmin = createMiddleware<AppBindings>(async (c, next) => {
  const { scopes, via } = c.get("principal");
  if (!holdsScope(scopes, "chat") && !holdsScope(scopes, "admin")) {
    const who = via === "api_key" ? "This API key lacks" : "You lack";
    throw new ApiError("insufficient_scope", `${who} the 'chat' or 'admin' scope.`);
  }
  await next();
});

const chat = { security: BEARER, middleware: [chatOrAdmin], tags: ["webhooks"] };

/** The endpoint `id` if the caller may see it: an admin of its org, or the member it is of; else 404. */
async function endpointFor(c: AppContext, id: string): Promise<StoredEndpoint> {
  const principal = c.get("principal");
  const endpoint = await new WebhookEndpoints(c.get("db")).get(principal.org, id);
  if (endpoint && (isOrgAdmin(principal) || endpoint.owner === principal.user)) return endpoint;
  throw new ApiError("webhook_not_found", `Webhook endpoint ${quoted(id)} not found.`);
}

function checkUrl(c: AppContext, url: string): void {
  const problem = webhookUrlProblem(url, settings(c.env).webhooks.allowHttpLoopback);
  if (problem) throw new ApiError("invalid_request", `Invalid 'url': ${problem}`, { param: "url" });
}

/** Whose endpoint a new one is: the org's for an admin, the member's own otherwise. */
const ownerOf = (principal: Principal): string | null => (isOrgAdmin(principal) ? null : principal.user);

/** Queues `event` for the endpoint alone; the delivery's id, as the consumer makes it. */
async function queueFor(c: AppContext, endpoint: StoredEndpoint, message: QueuedEvent): Promise<string> {
  await c.env.WEBHOOK_QUEUE.send(message);
  return deliveryIdOf(message.id, endpoint.id);
}

export const webhookRoutes = routes()
  .openapi(
    createRoute({
      method: "post",
      path: "/context/webhooks",
      summary:
        "Subscribe an endpoint to events (an admin: every session of the org; a member: their own); the signing secret is answered once",
      ...chat,
      request: jsonBody(CreateBody, "The endpoint."),
      responses: { 201: json(Created, "Subscribed."), ...errors(400, 401, 403, 409) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const principal = c.get("principal");
      checkUrl(c, body.url);
      const box = await requireSecretBox(c.env);
      const store = new WebhookEndpoints(c.get("db"));
      if ((await store.count(principal.org)) >= MAX_ENDPOINTS_PER_ORG) {
        throw new ApiError(
          "invalid_request",
          `Your organization has ${MAX_ENDPOINTS_PER_ORG} webhook endpoints, the most it may keep; remove one first.`,
        );
      }
      const id = `wh_${crypto.randomUUID().replaceAll("-", "")}`;
      const secret = newSigningSecret();
      const now = new Date().toISOString();
      const fresh = { org: principal.org, ownerUser: ownerOf(principal), createdBy: principal.user, ...body };
      const insert = await store.insertStatement(box, id, fresh, secret, now);
      const view: z.infer<typeof WebhookEndpointView> = {
        id,
        url: body.url,
        events: body.events,
        description: body.description,
        enabled: true,
        disabledReason: null,
        disabledAt: null,
        scope: fresh.ownerUser === null ? "org" : "user",
        owner: fresh.ownerUser,
        createdBy: principal.user,
        createdAt: now,
        updatedAt: now,
      };
      await c
        .get("db")
        .batch([
          insert,
          changeRow(c, { org: principal.org, action: "webhook.create", target: id, before: null, after: view }),
        ]);
      c.get("logger").addCustomEvent("Message", "[webhooks_create]", "Webhook endpoint created.", [["endpoint", id]]);
      return c.json({ endpoint: view, secret }, 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/webhooks",
      summary: "Webhook endpoints: an admin's org's, a member's own (disabled ones with why); never a secret",
      ...chat,
      responses: { 200: json(z.object({ endpoints: z.array(WebhookEndpointView) }), "The endpoints."), ...errors(401) },
    }),
    async (c) => {
      const principal = c.get("principal");
      const found = await new WebhookEndpoints(c.get("db")).list(principal.org, ownerOf(principal));
      return c.json({ endpoints: found.map(viewOf) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/webhooks/{id}",
      summary: "One webhook endpoint",
      ...chat,
      request: { params: EndpointId },
      responses: { 200: json(z.object({ endpoint: WebhookEndpointView }), "The endpoint."), ...errors(401, 404) },
    }),
    async (c) => c.json({ endpoint: viewOf(await endpointFor(c, c.req.valid("param").id)) }, 200),
  )
  .openapi(
    createRoute({
      method: "patch",
      path: "/context/webhooks/{id}",
      summary: "Change an endpoint's url, events, description, or enable it again (or disable it)",
      ...chat,
      request: { params: EndpointId, ...jsonBody(ChangeBody, "What changes.") },
      responses: { 200: json(z.object({ endpoint: WebhookEndpointView }), "Changed."), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const before = await endpointFor(c, c.req.valid("param").id);
      const change = c.req.valid("json");
      if (change.url !== undefined) checkUrl(c, change.url);
      const store = new WebhookEndpoints(c.get("db"));
      const now = new Date().toISOString();
      const org = c.get("principal").org;
      const after: z.infer<typeof WebhookEndpointView> = {
        ...viewOf(before),
        ...change,
        ...(change.enabled !== undefined ? { disabledReason: null, disabledAt: null } : {}),
        updatedAt: now,
      };
      await c
        .get("db")
        .batch([
          store.changeStatement(org, before.id, change, now),
          changeRow(c, { org, action: "webhook.change", target: before.id, before: viewOf(before), after }),
        ]);
      return c.json({ endpoint: after }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/context/webhooks/{id}",
      summary: "Remove an endpoint, and its deliveries' records (pending ones are not sent)",
      ...chat,
      request: { params: EndpointId },
      responses: { 204: { description: "Removed." }, ...errors(401, 404) },
    }),
    async (c) => {
      const endpoint = await endpointFor(c, c.req.valid("param").id);
      const org = c.get("principal").org;
      await c
        .get("db")
        .batch([
          new WebhookEndpoints(c.get("db")).deleteStatement(org, endpoint.id),
          ...new WebhookDeliveries(c.get("db")).deleteOfEndpointStatements(endpoint.id),
          changeRow(c, { org, action: "webhook.delete", target: endpoint.id, before: viewOf(endpoint) }),
        ]);
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/webhooks/{id}/test",
      summary: `Queue a \`${WEBHOOK_TEST_EVENT}\` event to this endpoint alone (202; see its deliveries)`,
      ...chat,
      request: { params: EndpointId },
      responses: { 202: json(Queued, "Queued."), ...errors(401, 404, 409) },
    }),
    async (c) => {
      const endpoint = await endpointFor(c, c.req.valid("param").id);
      if (!endpoint.enabled) {
        throw new ApiError(
          "webhook_disabled",
          `Webhook endpoint ${quoted(endpoint.id)} is disabled; enable it first (PATCH {"enabled": true}).`,
        );
      }
      const message: QueuedEvent = {
        kind: "event",
        id: newEventId(),
        at: new Date().toISOString(),
        event: {
          type: WEBHOOK_TEST_EVENT,
          org: endpoint.org,
          user: endpoint.owner,
          sessionId: null,
          data: { endpointId: endpoint.id, message: "A test event from aptix." },
        },
        only: endpoint.id,
      };
      const deliveryId = await queueFor(c, endpoint, message);
      return c.json({ eventId: message.id, deliveryId, type: WEBHOOK_TEST_EVENT }, 202);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/webhooks/{id}/deliveries",
      summary: "An endpoint's deliveries, newest first, each with its attempts (status codes, times, errors)",
      ...chat,
      request: { params: EndpointId, query: DeliveriesQuery },
      responses: {
        200: json(
          z.object({ deliveries: z.array(WebhookDeliveryView), next: z.number().int().nullable() }),
          "A page of deliveries; `next` is the next page's `before`.",
        ),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const endpoint = await endpointFor(c, c.req.valid("param").id);
      const query = c.req.valid("query");
      const page = await new WebhookDeliveries(c.get("db")).list(endpoint.id, {
        limit: query.limit,
        before: query.before ?? null,
      });
      return c.json(page, 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/webhooks/{id}/deliveries/{deliveryId}/retry",
      summary: "Try a delivery again now (the same webhook-id), with a retry window of its own",
      ...chat,
      request: { params: DeliveryParams },
      responses: { 202: json(Queued, "Queued."), ...errors(401, 404, 409) },
    }),
    async (c) => {
      const params = c.req.valid("param");
      const endpoint = await endpointFor(c, params.id);
      const deliveries = new WebhookDeliveries(c.get("db"));
      const delivery = await deliveries.ofEndpoint(endpoint.id, params.deliveryId);
      if (!delivery) {
        throw new ApiError("webhook_delivery_not_found", `Delivery ${quoted(params.deliveryId)} not found.`);
      }
      if (!endpoint.enabled) {
        throw new ApiError(
          "webhook_disabled",
          `Webhook endpoint ${quoted(endpoint.id)} is disabled; enable it first (PATCH {"enabled": true}).`,
        );
      }
      await deliveries.restart(delivery.id, new Date().toISOString());
      await c.env.WEBHOOK_QUEUE.send({ kind: "delivery", deliveryId: delivery.id });
      return c.json({ eventId: delivery.eventId, deliveryId: delivery.id, type: delivery.type }, 202);
    },
  );

// GET /.well-known/agent-card.json: the public A2A agent card (src/a2a/agent-card.ts), for anyone: a discoverable
// agent's card needs no credentials. Mounted before the key check.
import { AGENT_CARD_PATH, AgentCard } from "@a2a-js/sdk";
import { routes } from "../http";
import { publicAgentCard } from "./agent-card";

export const a2aCardRoutes = routes().get(`/${AGENT_CARD_PATH}`, async (c) => {
  const card = await publicAgentCard(c.get("db"), new URL(c.req.url).origin);
  return c.json(AgentCard.toJSON(card) as Record<string, unknown>, 200, { "cache-control": "public, max-age=60" });
});

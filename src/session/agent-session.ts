// AgentSession: one Durable Object per agent session (its mode, conversation and loop live here).
import { DurableObject } from "cloudflare:workers";

export class AgentSession extends DurableObject<Cloudflare.Env> {}

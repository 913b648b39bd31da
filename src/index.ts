// Worker entry: the Hono app, and the AgentSession Durable Object class.
import { createApp } from "./app";

export { AgentSession } from "./session/agent-session";

export default createApp();

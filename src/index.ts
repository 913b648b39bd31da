// Worker entry: the Hono app, and the Durable Object classes (a session each, a meter per org).
import { createApp } from "./app";

export { OrgMeter } from "./metering/org-meter";
export { AgentSession } from "./session/agent-session";

export default createApp();

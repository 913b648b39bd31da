// Worker entry: the Hono app behind its OAuth front door (src/auth/oauth.ts: the authorization server of /mcp),
// and the Durable Object classes (a session each, a meter per org).
import { createApp } from "./app";
import { withOAuth } from "./auth/oauth";

export { OrgMeter } from "./metering/org-meter";
export { AgentSession } from "./session/agent-session";

export default withOAuth(createApp());

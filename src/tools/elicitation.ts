// What a tool asks the user for in the middle of a call (an MCP server's elicitation); the shapes of the question
// and the answer are the wire's (src/wire/elicitation.ts).
import type { ElicitationSchema } from "../wire/elicitation";

/** What a tool asks the user for in the middle of a call. */
export interface ElicitationRequest {
  /** The MCP server that asks, and the tool it asks for. */
  server: string;
  tool: string;
  message: string;
  requestedSchema: ElicitationSchema;
}

// agent_hello_world (TUL-011 §6): the canonical minimal tool, a personalised greeting.
import { z } from "zod";
import { defineTool } from "./define-tool";
import { nonBlankString } from "./tool-arguments";

const missingName = "HelloWorldTool requires a non-empty 'name' string.";
const HelloWorldArgs = z.object({ name: nonBlankString(missingName).describe("The name of the person to greet.") });

/** TUL-011 §6's HelloWorldTool. It needs no service, so it is one value; it logs to the context's logger. */
export const helloWorldTool = defineTool({
  name: "agent_hello_world",
  label: "HelloWorldTool",
  usage:
    "Use this tool to generate a personalized greeting when the user asks to be greeted or welcomed. " +
    "Pass the user's name; do not call it for any other purpose.",
  description: "Creates a friendly greeting using the user's name.",
  category: "general",
  runsOn: "server",
  // It only answers with a greeting: a call a restart cut off may run again.
  repeatable: true,
  priority: 10,
  args: HelloWorldArgs,
  failureMessage: "HelloWorldTool failed to create a greeting.",
  execute: ({ name }, context) => ({
    message: `Hello, ${name.trim()}! Welcome to Aptix.`,
    conversationId: context?.conversationId ?? "",
    sessionId: context?.sessionId ?? "",
  }),
});

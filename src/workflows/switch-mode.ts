// switch_mode: the user picks the session's mode (recorded with the reason "selected by the user").

import { z } from "zod";
import { unknownModeMessage } from "../modes/catalog-service";
import { defineWorkflow, WorkflowError } from "./workflow";

export const SWITCH_MODE_REASON = "selected by the user";

export const switchModeWorkflow = defineWorkflow({
  id: "switch_mode",
  name: "Switch mode",
  description:
    "Change this session's mode; the agent works with the new mode's prompt and tools from the next message.",
  category: "session",
  positional: "mode",
  parameters: z.strictObject({
    mode: z.string().min(1, "must not be empty").describe("Key of the mode to switch to, for example 'workspace'."),
  }),
  async run({ mode }, context) {
    if (!(await context.catalog.getMode(mode))) {
      throw new WorkflowError(await unknownModeMessage(context.catalog, mode), "mode");
    }
    if (mode === context.mode)
      return { message: `The session is already in the ${mode} mode.`, data: { mode, changed: false } };
    const from = context.mode;
    await context.setMode(mode, SWITCH_MODE_REASON);
    return {
      message: `Switched the session from the ${from} mode to the ${mode} mode.`,
      data: { from, mode, changed: true },
    };
  },
});

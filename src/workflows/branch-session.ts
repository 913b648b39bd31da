// branch_session: a new session in a chosen mode, linked to this one as its parent.

import { z } from "zod";
import { unknownModeMessage } from "../modes/catalog-service";
import { defineWorkflow, WorkflowError } from "./workflow";

export const branchSessionWorkflow = defineWorkflow({
  id: "branch_session",
  name: "Branch session",
  description: "Start a new session in a chosen mode, linked to this one, for separate work.",
  category: "session",
  positional: "mode",
  parameters: z.strictObject({
    mode: z
      .string()
      .min(1, "must not be empty")
      .describe("Key of the new session's mode, for example 'ddr_authoring'."),
  }),
  async run({ mode }, context) {
    if (!(await context.catalog.getMode(mode))) {
      throw new WorkflowError(await unknownModeMessage(context.catalog, mode), "mode");
    }
    const branchSessionId = await context.createBranch(mode);
    return {
      message: `Started session ${branchSessionId} in the ${mode} mode, linked to this one.`,
      data: { branchSessionId, mode },
    };
  },
});

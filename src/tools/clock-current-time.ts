// clock_current_time: the date and time now, in UTC or a time zone the model names. A model knows no "now" of its
// own; it is also the tool docs/guides/add-a-tool.md adds, step by step (so the guide describes real code).
import { z } from "zod";
import { InvokeResult } from "./contract";
import { defineTool } from "./define-tool";

const CurrentTimeArgs = z.object({
  timeZone: z
    .string({ error: "CurrentTimeTool requires 'timeZone' to be a string when it is given." })
    .optional()
    .describe("An IANA time zone such as Europe/Paris or Asia/Tokyo; UTC when omitted."),
});

export const currentTimeTool = defineTool({
  name: "clock_current_time",
  label: "CurrentTimeTool",
  usage:
    "Use this tool when the user asks what time or date it is, here or in a time zone, or when an answer depends " +
    "on today's date. Pass an IANA time zone when the user names a place; omit it for UTC.",
  description: "The current date and time, in UTC or in a time zone.",
  category: "general",
  runsOn: "server",
  // It only reads the clock.
  repeatable: true,
  // `{}` and no arguments at all both ask for UTC.
  blankArguments: "empty",
  args: CurrentTimeArgs,
  execute: ({ timeZone = "UTC" }) => {
    const now = new Date();
    let local: string;
    try {
      local = new Intl.DateTimeFormat("en-GB", { timeZone, dateStyle: "full", timeStyle: "long" }).format(now);
    } catch {
      // Intl throws a RangeError for a zone it does not know: the model is told how to ask again.
      return InvokeResult.fromError(
        `CurrentTimeTool does not know the time zone '${timeZone}'; use an IANA name such as Europe/Paris.`,
      );
    }
    return { timeZone, utc: now.toISOString(), local };
  },
});

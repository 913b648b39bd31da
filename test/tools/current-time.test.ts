// clock_current_time: the time now in UTC or a named zone, an unknown zone refused in words the model can act on.
import { describe, expect, it } from "vitest";
import { currentTimeTool as tool } from "../../src/tools/clock-current-time";
import { toolContext } from "../fixtures/tool-context";

const answer = async (argumentsJson: string) => {
  const result = await tool.execute(argumentsJson, toolContext());
  if (!result.successful) throw new Error(result.errorMessage ?? "failed");
  return JSON.parse(result.result ?? "") as { timeZone: string; utc: string; local: string };
};

describe("CurrentTimeTool", () => {
  it("answers the time in UTC when no time zone is given", async () => {
    for (const args of ["", "{}"]) {
      const time = await answer(args);
      expect(time.timeZone).toBe("UTC");
      expect(new Date(time.utc).toISOString()).toBe(time.utc);
      expect(time.local).toMatch(/ UTC$/);
    }
  });

  it("answers the local time in the time zone it is given", async () => {
    const time = await answer('{"timeZone":"Asia/Tokyo"}');
    expect(time.timeZone).toBe("Asia/Tokyo");
    expect(time.local).toMatch(/GMT\+9$/);
  });

  it("refuses a time zone it does not know, saying what to pass instead", async () => {
    const result = await tool.execute('{"timeZone":"Mars/Olympus"}', toolContext());
    expect([result.successful, result.errorMessage]).toEqual([
      false,
      "CurrentTimeTool does not know the time zone 'Mars/Olympus'; use an IANA name such as Europe/Paris.",
    ]);
  });
});

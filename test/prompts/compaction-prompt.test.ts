// The compaction's fixed prompt: its instructions, then the summary so far (when there is one) and the messages.
import { describe, expect, it } from "vitest";
import { COMPACTION_INSTRUCTIONS, compactionRequest } from "../../src/prompts/compaction-prompt";

describe("the compaction prompt", () => {
  it("sends the fixed instructions as the system message and the messages to summarise after them", () => {
    expect(compactionRequest(null, "User: hello")).toEqual([
      { role: "system", content: COMPACTION_INSTRUCTIONS },
      { role: "user", content: "Messages to summarise:\nUser: hello" },
    ]);
  });

  it("puts the summary so far ahead of the messages, to be folded in", () => {
    expect(compactionRequest("They met.", "User: again")[1]?.content).toBe(
      "Summary so far:\nThey met.\n\nMessages to summarise:\nUser: again",
    );
  });
});

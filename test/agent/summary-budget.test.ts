// The summary keeps to its budget: a summariser's answer within it is stored whole; a longer one is cut at its last
// sentence end within the budget, with a note saying so.
import { describe, expect, it } from "vitest";
import { SUMMARY_CUT_NOTE, summaryWithinBudget } from "../../src/agent/summary-budget";
import { estimateTokens } from "../../src/token-estimate";

describe("the summary's budget", () => {
  it("keeps a summary within its budget whole", () => {
    expect(summaryWithinBudget("The user wants a plan. They chose Go.", 20)).toBe(
      "The user wants a plan. They chose Go.",
    );
  });

  it("cuts a longer summary at its last sentence end within the budget, with a note", () => {
    const text = "The user wants a plan for the migration. ".repeat(40);
    const cut = summaryWithinBudget(text, 50);
    expect(estimateTokens(cut)).toBeLessThanOrEqual(50);
    expect(cut.endsWith(`migration.\n${SUMMARY_CUT_NOTE}`)).toBe(true);
  });
});

// defineTool's wrapper (TUL-011 §3, AGN-005 §4, §7): execute gets typed arguments and never throws; a thrown
// exception is a failed result with the tool's generic message, logged with the AGN-005 tag.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentToolExecutionContext, InvokeResult } from "../../src/tools/contract";
import { defineTool } from "../../src/tools/define-tool";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";

const CountArgs = z.object({
  count: z.number({ error: "CountTool requires a 'count' number." }).describe("How many."),
});

function countTool(
  execute: (args: { count: number }, context: AgentToolExecutionContext | null | undefined) => object,
  options: { failureMessage?: string; blankArguments?: "refuse" | "empty"; noLogger?: boolean } = {},
) {
  const logger = new RecordingAdminLogger();
  const tool = defineTool({
    name: "test_count",
    label: "CountTool",
    usage: "Counts.",
    category: "general",
    runsOn: "server",
    args: CountArgs,
    ...(options.noLogger ? {} : { logger }),
    ...(options.failureMessage ? { failureMessage: options.failureMessage } : {}),
    ...(options.blankArguments ? { blankArguments: options.blankArguments } : {}),
    execute,
  });
  return { tool, logger };
}

const boom = (): object => {
  throw new Error("disk on fire at /srv/secret/path");
};

describe("defineTool's execute", () => {
  it("hands execute the parsed, typed arguments and serialises the value it returns", async () => {
    const { tool } = countTool(({ count }, context) => ({ doubled: count * 2, sessionId: context?.sessionId }));
    const result = await tool.execute('{"count":21}', toolContext());
    expect(result).toEqual({ successful: true, result: '{"doubled":42,"sessionId":"session-1"}' });
  });

  it("passes on an InvokeResult that execute made: a failure, or a result with effects", async () => {
    const failing = countTool(() => InvokeResult.fromError("CountTool cannot count that high."));
    expect(await failing.tool.execute('{"count":1}', toolContext())).toEqual({
      successful: false,
      errorMessage: "CountTool cannot count that high.",
    });
    const effect = { type: "mode_changed" as const, to: "general", reason: "r", branch: false };
    const moving = countTool(() => InvokeResult.create('{"moved":true}', [effect]));
    expect(await moving.tool.execute('{"count":1}', toolContext())).toEqual({
      successful: true,
      result: '{"moved":true}',
      effects: [effect],
    });
  });

  it("turns a thrown exception into a failed result with the tool's generic message, logged with the AGN-005 tag", async () => {
    const { tool, logger } = countTool(boom, { failureMessage: "CountTool failed to count." });
    const result = await tool.execute('{"count":1}', toolContext());
    expect(result).toEqual({ successful: false, errorMessage: "CountTool failed to count." });
    expect(logger.exceptions).toEqual([
      {
        tag: "[test_count_ExecuteAsync__Exception]",
        error: new Error("disk on fire at /srv/secret/path"),
        pairs: [
          ["SessionId", "session-1"],
          ["ConversationId", "conversation-1"],
        ],
      },
    ]);
  });

  it("answers an exception with '<label> failed unexpectedly.' when the tool names no generic message", async () => {
    const { tool } = countTool(boom);
    expect(await tool.execute('{"count":1}', toolContext())).toEqual({
      successful: false,
      errorMessage: "CountTool failed unexpectedly.",
    });
  });

  it("logs a tool's exception to the context's logger when the tool was given none", async () => {
    const { tool } = countTool(boom, { noLogger: true });
    const logger = new RecordingAdminLogger();
    expect((await tool.execute('{"count":1}', toolContext({ logger }))).successful).toBe(false);
    expect(logger.exceptions.map((e) => e.tag)).toEqual(["[test_count_ExecuteAsync__Exception]"]);
    // With no context at all it still answers, and does not throw.
    expect(await tool.execute('{"count":1}', null)).toEqual({
      successful: false,
      errorMessage: "CountTool failed unexpectedly.",
    });
  });

  it("returns validation failures in the schema's words without running execute", async () => {
    let ran = 0;
    const { tool, logger } = countTool(() => ({ ran: ++ran }));
    const messages = await Promise.all(
      ["", "{not json", "[1]", '{"count":"x"}'].map(
        async (json) => (await tool.execute(json, toolContext())).errorMessage,
      ),
    );
    expect(messages).toEqual([
      "CountTool requires a non-empty arguments object.",
      "CountTool requires its arguments as a JSON object; the arguments are not valid JSON.",
      "CountTool requires its arguments as a JSON object.",
      "CountTool requires a 'count' number.",
    ]);
    expect(tool.checkArguments?.('{"count":"x"}')).toBe("CountTool requires a 'count' number.");
    expect(tool.checkArguments?.('{"count":1}')).toBeNull();
    expect([ran, logger.exceptions.length]).toEqual([0, 0]);
  });

  it("reads blank arguments as {} when the tool says so", async () => {
    const { tool } = countTool(() => ({ ok: true }), { blankArguments: "empty" });
    expect((await tool.execute("  ", toolContext())).errorMessage).toBe("CountTool requires a 'count' number.");
  });

  it("does not run a call whose turn is already cancelled", async () => {
    let ran = 0;
    const { tool, logger } = countTool(() => ({ ran: ++ran }));
    const controller = new AbortController();
    controller.abort();
    const result = await tool.execute('{"count":1}', toolContext(), controller.signal);
    expect(result).toEqual({ successful: false, errorMessage: "CountTool was cancelled with the turn." });
    expect([ran, logger.exceptions.length]).toEqual([0, 0]);
  });

  it("makes the schema once and hands out copies, so a caller cannot change the tool's schema", () => {
    const { tool } = countTool(() => ({}));
    const schema = tool.getSchema();
    schema.description = "changed";
    expect(tool.getSchema()).toEqual({
      type: "function",
      name: "test_count",
      description: "Counts.",
      parameters: {
        type: "object",
        properties: { count: { type: "number", description: "How many." } },
        required: ["count"],
        additionalProperties: false,
      },
    });
  });
});

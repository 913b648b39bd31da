// workspace_read_file (TUL-011 §5): happy path, each validation failure, exception handling, and the check
// that a client's result answers the file that was asked for.
import { describe, expect, it } from "vitest";
import { workspaceReadFileTool } from "../../src/tools/workspace-read-file";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";

function setup() {
  const logger = new RecordingAdminLogger();
  return { logger, tool: workspaceReadFileTool(logger) };
}

describe("WorkspaceReadFileTool", () => {
  it("prepares a read of the normalised path with the default size for the client", async () => {
    const result = await setup().tool.execute(JSON.stringify({ path: "./src//index.ts" }), toolContext());
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result ?? "")).toEqual({ action: "read_file", path: "src/index.ts", maxBytes: 262144 });
  });

  it("passes a given maxBytes on", async () => {
    const result = await setup().tool.execute(JSON.stringify({ path: "a.md", maxBytes: 10 }), toolContext());
    expect(JSON.parse(result.result ?? "").maxBytes).toBe(10);
  });

  it("refuses empty arguments, arguments that are not a JSON object, and a missing path", async () => {
    const { tool } = setup();
    const messages = await Promise.all(
      ["", "not json", "[1]", "{}"].map(async (args) => (await tool.execute(args, toolContext())).errorMessage),
    );
    expect(messages).toEqual([
      "WorkspaceReadFileTool requires a non-empty arguments object.",
      "WorkspaceReadFileTool requires its arguments as a JSON object; the arguments are not valid JSON.",
      "WorkspaceReadFileTool requires its arguments as a JSON object.",
      "WorkspaceReadFileTool requires a 'path' string.",
    ]);
  });

  it("refuses a maxBytes that is not a whole number from 1 to 1 MiB", async () => {
    const { tool } = setup();
    const messages = await Promise.all(
      ["x", 1.5, 0, 2_000_000].map(
        async (maxBytes) => (await tool.execute(JSON.stringify({ path: "a", maxBytes }), toolContext())).errorMessage,
      ),
    );
    expect(messages).toEqual([
      "WorkspaceReadFileTool requires 'maxBytes' to be a number when it is given.",
      "WorkspaceReadFileTool requires 'maxBytes' to be a whole number.",
      "WorkspaceReadFileTool requires 'maxBytes' of at least 1.",
      "WorkspaceReadFileTool reads at most 1048576 bytes at a time.",
    ]);
  });

  it("refuses a path that leaves the workspace or holds secrets, and unknown arguments", async () => {
    const { tool } = setup();
    const outside = await tool.execute(JSON.stringify({ path: "%2e%2e/etc/passwd" }), toolContext());
    expect(outside.errorMessage).toBe(
      "WorkspaceReadFileTool refused the path: '%2e%2e/etc/passwd' leaves the workspace ('..' is not allowed).",
    );
    const secret = await tool.execute(JSON.stringify({ path: ".env" }), toolContext());
    expect(secret.errorMessage).toMatch(/^WorkspaceReadFileTool refused the path: '\.env' is protected/);
    const extra = await tool.execute(JSON.stringify({ path: "a", mode: "rw" }), toolContext());
    expect(extra.successful).toBe(false);
  });

  it("turns an unexpected exception into its generic failure, logged with the AGN-005 tag", async () => {
    const { tool, logger } = setup();
    // Arguments of the wrong runtime type make the tool throw inside run().
    const result = await Reflect.apply(tool.execute, tool, [{ path: "a" }, toolContext()]);
    expect(result).toEqual({ successful: false, errorMessage: "WorkspaceReadFileTool failed to prepare the read." });
    expect(logger.exceptions.map((e) => e.tag)).toEqual(["[workspace_read_file_ExecuteAsync__Exception]"]);
  });

  it("accepts a client result for the path asked for, and refuses one for another file", () => {
    const { tool } = setup();
    const prepared = JSON.stringify({ action: "read_file", path: "src/index.ts", maxBytes: 100 });
    expect(tool.checkClientResult?.(prepared, { path: "./src/index.ts", content: "x" })).toBeNull();
    expect(tool.checkClientResult?.(prepared, { path: ".env", content: "SECRET=1" })).toBe(
      "is for '.env', not for 'src/index.ts', the path that was asked for",
    );
  });
});

// workspace_write_file (TUL-011 §5): happy path, each validation failure, exception handling, and the check
// that a client's result answers the file that was asked for.
import { describe, expect, it } from "vitest";
import { workspaceWriteFileTool } from "../../src/tools/workspace-write-file";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";

function setup() {
  const logger = new RecordingAdminLogger();
  return { logger, tool: workspaceWriteFileTool(logger) };
}

describe("WorkspaceWriteFileTool", () => {
  it("prepares a write of the normalised path with the content and its size in bytes", async () => {
    const result = await setup().tool.execute(
      JSON.stringify({ path: "notes\\todo.md", content: "héllo" }),
      toolContext(),
    );
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result ?? "")).toEqual({
      action: "write_file",
      path: "notes/todo.md",
      content: "héllo",
      bytes: 6,
    });
  });

  it("refuses empty arguments, a missing path and missing content", async () => {
    const { tool } = setup();
    const messages = await Promise.all(
      ["  ", '{"content":"x"}', '{"path":"a.txt"}', '{"path":"a.txt","content":7}'].map(
        async (args) => (await tool.execute(args, toolContext())).errorMessage,
      ),
    );
    expect(messages).toEqual([
      "WorkspaceWriteFileTool requires a non-empty arguments object.",
      "WorkspaceWriteFileTool requires a 'path' string.",
      "WorkspaceWriteFileTool requires a 'content' string.",
      "WorkspaceWriteFileTool requires a 'content' string.",
    ]);
  });

  it("refuses content over 1 MiB, saying how large it was", async () => {
    const result = await setup().tool.execute(
      JSON.stringify({ path: "big.txt", content: "x".repeat(1_048_577) }),
      toolContext(),
    );
    expect(result.errorMessage).toBe("WorkspaceWriteFileTool writes at most 1048576 bytes; this content has 1048577.");
  });

  it("refuses paths that leave the workspace or hold secrets", async () => {
    const { tool } = setup();
    for (const path of [
      "../../etc/passwd",
      "/etc/passwd",
      "file:///etc/passwd",
      ".git/hooks/pre-commit",
      "~/.profile",
    ]) {
      const result = await tool.execute(JSON.stringify({ path, content: "x" }), toolContext());
      expect(result.errorMessage, path).toMatch(/^WorkspaceWriteFileTool refused the path: /);
    }
  });

  it("turns an unexpected exception into its generic failure, logged with the AGN-005 tag", async () => {
    const { tool, logger } = setup();
    const result = await Reflect.apply(tool.execute, tool, [42, toolContext()]);
    expect(result).toEqual({ successful: false, errorMessage: "WorkspaceWriteFileTool failed to prepare the write." });
    expect(logger.exceptions.map((e) => e.tag)).toEqual(["[workspace_write_file_ExecuteAsync__Exception]"]);
  });

  it("accepts a client result for the path asked for, and refuses one for another file", () => {
    const { tool } = setup();
    const prepared = JSON.stringify({ action: "write_file", path: "a.txt", content: "A", bytes: 1 });
    expect(tool.checkClientResult?.(prepared, { path: "a.txt", bytesWritten: 1 })).toBeNull();
    expect(tool.checkClientResult?.(prepared, { path: "b.txt", bytesWritten: 1 })).toMatch(
      /^is for 'b\.txt', not for 'a\.txt'/,
    );
  });
});

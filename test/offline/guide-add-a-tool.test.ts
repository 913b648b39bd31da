// docs/guides/add-a-tool.md, done as written against the server as `npm start` serves it (the offline demo model):
// the tool it shows is the tool in src/tools/, registered as it says, and its curl commands make the mode and have
// the demo model call the tool from plain words ("what time is it?"), the tool's result in the answer.
import { describe, expect, it } from "vitest";
import guide from "../../docs/guides/add-a-tool.md?raw";
import toolSource from "../../src/tools/clock-current-time.ts?raw";
import registrySource from "../../src/tools/index.ts?raw";
import { blockShowing, curlCommands, guideBlocks, sendCurl } from "../fixtures/guide-blocks";
import { newChatKey } from "../passthrough/harness";

describe("docs/guides/add-a-tool.md", () => {
  it("shows the tool's file as it is in src/tools/", () => {
    expect(blockShowing(guide, "src/tools/clock-current-time.ts")).toBe(toolSource);
  });

  it("registers the tool with lines src/tools/index.ts has", () => {
    const excerpt = guideBlocks(guide).find((b) => b.lang === "ts" && b.code.includes("currentTimeTool.name"));
    const lines = excerpt?.code.trim().split("\n") ?? [];
    expect(lines.length).toBe(2);
    for (const line of lines) expect(registrySource.split("\n")).toContain(line);
  });

  it("makes a mode listing the tool, whose agent calls it when asked the time in plain words", async () => {
    // dev-key, as seeds/local.sql makes it: an operator.
    const key = await newChatKey("org-a", ["chat", "admin", "operator"]);
    const shell = { APTIX_URL: "http://localhost:8788", APTIX_KEY: key.key };
    const [putMode, ask, ...rest] = guideBlocks(guide)
      .filter((b) => b.lang === "sh")
      .flatMap((b) => curlCommands(b.code, shell));
    expect(rest).toEqual([]);
    if (!putMode || !ask) throw new Error("the guide has no curl commands");

    const made = await sendCurl(putMode);
    expect(made.status, await made.clone().text()).toBe(201);
    expect(((await made.json()) as { mode: { tools: string[] } }).mode.tools).toEqual(["clock_current_time"]);

    const answered = await sendCurl(ask);
    expect(answered.status).toBe(200);
    const completion = (await answered.json()) as { choices: { message: { content: string } }[] };
    const content = completion.choices[0]?.message.content ?? "";
    const said = /^\[offline demo model\] The tool clock_current_time answered: (\{.*\})$/.exec(content);
    expect(said, content).not.toBeNull();
    const result = JSON.parse(said?.[1] ?? "{}") as { timeZone: string; utc: string; local: string };
    expect(result.timeZone).toBe("UTC");
    expect(new Date(result.utc).toISOString()).toBe(result.utc);
  });
});

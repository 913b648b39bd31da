// docs/guides/add-a-mode.md's API steps, run in order as written against the server as `npm start` serves it:
// the mode is added, listed, answers as the model `aptix-agent/<key>` with the tool it offers, and is removed.
import { describe, expect, it } from "vitest";
import guide from "../../docs/guides/add-a-mode.md?raw";
import { curlCommands, guideBlocks, sendCurl } from "../fixtures/guide-blocks";
import { newChatKey } from "../passthrough/harness";

describe("docs/guides/add-a-mode.md", () => {
  it("adds the mode, lists it, talks to it and removes it, each answer as the guide says", async () => {
    // dev-key, as seeds/local.sql makes it: an operator.
    const key = await newChatKey("org-a", ["chat", "admin", "operator"]);
    const shell = { APTIX_URL: "http://localhost:8788", APTIX_KEY: key.key };
    const commands = guideBlocks(guide)
      .filter((b) => b.lang === "sh")
      .flatMap((b) => curlCommands(b.code, shell));
    expect(commands.map((c) => c.method)).toEqual(["PUT", "GET", "POST", "DELETE"]);
    // One after another, as a reader runs them.
    const answers: Response[] = [];
    for (const command of commands) answers.push(await sendCurl(command));
    const [add, list, talk, remove] = answers;
    expect([add?.status, list?.status, talk?.status, remove?.status]).toEqual([201, 200, 200, 204]);
    const listed = (await list?.json()) as { modes: { key: string; displayName: string }[] };
    expect(listed.modes.find((m) => m.key === "support_triage")?.displayName).toBe("Support Triage");
    const completion = (await talk?.json()) as { choices: { message: { content: string } }[] };
    expect(completion.choices[0]?.message.content).toBe("[offline demo model] Hello, Ada! Welcome to Aptix.");
  });
});

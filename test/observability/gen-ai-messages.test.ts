// The captured messages (content capture on) of a user's message with an image: its text, never the image's data.
import { describe, expect, it } from "vitest";
import { genAiMessages } from "../../src/observability/tracing/content";

describe("genAiMessages", () => {
  it("records a user message's text parts and leaves an image's data out", () => {
    const [message] = genAiMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "What is in it?" },
          { type: "text", text: "Attached image `dot.png` (image/png):" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==" } },
        ],
      },
    ]);
    expect(message).toEqual({
      role: "user",
      parts: [{ type: "text", content: "What is in it?\nAttached image `dot.png` (image/png):" }],
    });
  });
});

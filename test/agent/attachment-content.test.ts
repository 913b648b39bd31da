// How attached files reach the model: a text file fenced beyond its own backticks, images as parts, and a route
// without images given a note in their place.
import { describe, expect, it } from "vitest";
import { attachmentTokens, IMAGE_TOKENS, userContent, withoutImages } from "../../src/agent/attachment-content";

const image = { name: "a.png", mediaType: "image/png", bytes: 3, data: "AAAA" };

describe("attachment content", () => {
  it("leaves a message without files as its text", () => {
    expect(userContent("hello")).toBe("hello");
  });

  it("fences a text file with more backticks than any run in it", () => {
    const file = { name: "a.md", mediaType: "text/markdown", bytes: 9, text: "````x````" };
    expect(userContent("see", [file])).toBe("see\n\nAttached file `a.md` (text/markdown):\n`````\n````x````\n`````");
  });

  it("names a file whose name holds backticks in one code span they cannot close", () => {
    const file = { name: "a`b.md", mediaType: "text/markdown", bytes: 1, text: "x" };
    expect(userContent("", [file])).toBe("Attached file ``a`b.md`` (text/markdown):\n```\nx\n```");
  });

  it("sends images as parts after the text, each named", () => {
    expect(userContent("", [image])).toEqual([
      { type: "text", text: "Attached image `a.png` (image/png):" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ]);
  });

  it("gives a route without images one string with a note in place of each image", () => {
    const [message] = withoutImages([{ role: "user", content: userContent("look", [image]) }]);
    expect(message).toEqual({
      role: "user",
      content: "look\nAttached image `a.png` (image/png):\n(The image is not shown: this model does not read images.)",
    });
  });

  it("counts a text file by its text and an image as IMAGE_TOKENS", () => {
    const file = { name: "a.txt", mediaType: "text/plain", bytes: 8, text: "12345678" };
    expect(attachmentTokens([file, image])).toBe(2 + IMAGE_TOKENS);
  });
});

// The console checks a file before it sends it (public/js/attachments.js) against its own copy of the server's limits
// and types: the browser cannot import the server's TypeScript. This holds the copy to the server's values, so the
// page never states a limit the server does not keep, nor refuses a file the server would take.
import { describe, expect, it } from "vitest";
import { IMAGE_TYPES, LIMITS, TEXT_APPLICATION_TYPES } from "../../public/js/attachments.js";
import {
  IMAGE_MEDIA_TYPES,
  MAX_ATTACHMENT_TEXT_CHARS,
  MAX_ATTACHMENTS,
  MAX_ATTACHMENTS_TOTAL_CHARS,
  MAX_IMAGE_BYTES,
  TEXT_APPLICATION_TYPES as SERVER_TEXT_APPLICATION_TYPES,
} from "../../src/wire/attachments.ts";

describe("the console's attachment limits", () => {
  it("are the server's limits", () => {
    expect(LIMITS).toEqual({
      files: MAX_ATTACHMENTS,
      textBytes: MAX_ATTACHMENT_TEXT_CHARS,
      imageBytes: MAX_IMAGE_BYTES,
      totalChars: MAX_ATTACHMENTS_TOTAL_CHARS,
    });
  });

  it("take the server's image types", () => {
    expect([...IMAGE_TYPES].sort()).toEqual([...IMAGE_MEDIA_TYPES].sort());
  });

  it("take the server's text application types", () => {
    expect([...TEXT_APPLICATION_TYPES].sort()).toEqual([...SERVER_TEXT_APPLICATION_TYPES].sort());
  });
});

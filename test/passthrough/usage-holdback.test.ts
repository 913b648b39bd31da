// The hold-back of a metered stream (src/passthrough/usage-holdback.ts): what asking the upstream for usage added
// is taken out, and nothing else changes, whatever the line ends and wherever the chunks are cut.
import { describe, expect, it } from "vitest";
import { UsageHoldback } from "../../src/passthrough/usage-holdback";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the client receives for `text` cut into chunks of `size` bytes. */
function through(text: string, size: number): string {
  const holdback = new UsageHoldback();
  const bytes = encoder.encode(text);
  let out = "";
  for (let i = 0; i < bytes.length; i += size) {
    const piece = holdback.push(bytes.slice(i, i + size));
    if (piece) out += decoder.decode(piece);
  }
  const rest = holdback.flush();
  return rest ? out + decoder.decode(rest) : out;
}

const asked = (eol: string) =>
  [
    `data: {"id":"c","choices":[{"index":0,"delta":{"content":"say \\"usage\\":null"}}],"usage":null}`,
    `data: {"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
    "data: [DONE]",
  ].join(`${eol}${eol}`) + `${eol}${eol}`;

const unasked = (eol: string) =>
  [`data: {"id":"c","choices":[{"index":0,"delta":{"content":"say \\"usage\\":null"}}]}`, "data: [DONE]"].join(
    `${eol}${eol}`,
  ) + `${eol}${eol}`;

describe("the usage hold-back", () => {
  for (const [name, eol] of [
    ["LF", "\n"],
    ["CRLF", "\r\n"],
  ] as const) {
    it(`gives back the stream as it would have been without usage, with ${name} line ends, however it is cut`, () => {
      for (const size of [1, 7, 64, 10_000]) expect(through(asked(eol), size)).toBe(unasked(eol));
    });
  }

  it("leaves text that quotes usage inside a string as it is", () => {
    expect(through(asked("\n"), 5)).toContain('say \\"usage\\":null');
  });
});
